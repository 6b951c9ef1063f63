package trj

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// SMCPilots draws each model's pilot with independent adaptive-tempering
// SMC runs, which also estimate each model's evidence; suited to
// multimodal posteriors.
type SMCPilots struct {
	// Runs is the number of independent runs per model (40), half for
	// training and half for evaluation, each evaluation run one group of
	// the bridge's jackknife (so that its standard error rests on 20
	// groups: with few groups it is itself too noisy to trust).
	Runs int
	// SMC configures each run (200 particles when SMC.Particles is zero).
	SMC *kernels.SMCSettings
	// Refresh is the number of NUTS transitions (at the posterior, with a
	// kernel adapted from the particles) applied to every particle before
	// use (10; negative: none). A finite particle system's draws are
	// biased by the same amount in every run, which the spread across
	// runs cannot reveal; these moves shrink that bias.
	Refresh int
	// Tempered, when non-nil, gives model k's tempered form; by default a
	// model that is a Temperer (ppl models) provides it.
	Tempered func(k int) (kernels.TemperedModel, error)
}

// Temperer is a model with a tempered form for SMC pilots; *ppl.GraphModel
// is one.
type Temperer interface {
	Tempered() (*ppl.TemperedModel, error)
}

// Name returns "SMC".
func (SMCPilots) Name() string { return "SMC" }

func (p SMCPilots) withDefaults() PilotMethod { return p.defaults() }

func (p SMCPilots) defaults() SMCPilots {
	runs.OrDefault(&p.Runs, 40)
	runs.OrDefault(&p.Refresh, 10)
	return p
}

// CheckSpace refuses run counts that cannot be split in halves and, when
// Tempered is nil, models without a tempered form.
func (p SMCPilots) CheckSpace(space *ppl.Space) error {
	p = p.defaults()
	if p.Runs < 4 || p.Runs%2 != 0 {
		return fmt.Errorf("%d SMC runs (SMCPilots.Runs): need an even number ≥ 4 (half train, half evaluate)", p.Runs)
	}
	if p.Tempered != nil {
		return nil
	}
	for k := range space.NumModels() {
		m, err := space.Model(k)
		if err != nil {
			return err
		}
		if _, ok := m.(Temperer); !ok {
			return fmt.Errorf("model %q (%T) has no tempered form for SMC: set SMCPilots.Tempered", space.ModelLabel(k), m)
		}
	}
	return nil
}

// Pilot makes the model's runs: the particles of the first half train,
// each run of the second half is one evaluation group, and every run's
// log-evidence estimate is kept (Pilot.LogZ). With Refresh > 0 it then
// adapts a NUTS kernel from the draws and moves every particle by it.
func (ps SMCPilots) Pilot(ctx context.Context, job *PilotJob) (*Pilot, error) {
	ps = ps.defaults()
	m, k := job.Model, job.K
	factory, err := ps.temperedFactory(m, k)
	if err != nil {
		return nil, err
	}
	var set kernels.SMCSettings
	if ps.SMC != nil {
		set = *ps.SMC
	}
	if set.Particles == 0 {
		set.Particles = 200
	}
	// One worker per run: the runs of all models already fill the cores,
	// and SMC's result does not depend on the worker count.
	set.Workers = 1
	nruns := ps.Runs
	p := &pilot{LogZ: make([]float64, nruns)}
	for r := range nruns {
		set.Seed = runs.SubSeed(job.Seed, fmt.Sprintf("smc/%d", k), r)
		res, err := kernels.RunSMC(ctx, factory, &set)
		if err != nil {
			return nil, fmt.Errorf("SMC run %d: %w", r, err)
		}
		p.LogZ[r] = res.LogZ
		draws := make([][]float64, set.Particles)
		for i := range draws {
			draws[i] = append([]float64(nil), res.Particle(i)...)
		}
		if r < nruns/2 {
			p.Train = append(p.Train, draws...)
		} else {
			p.Eval = append(p.Eval, draws)
		}
		if job.Progress != nil {
			job.Progress(r+1, nruns)
		}
	}
	if ps.Refresh <= 0 {
		return p, nil
	}
	if err := adaptWithin(ctx, job.Seed, m, k, p); err != nil {
		return nil, err
	}
	return p, refresh(ctx, job.Seed, m, k, ps.Refresh, p)
}

func (ps SMCPilots) temperedFactory(m ppl.Model, k int) (func(int) (kernels.TemperedModel, error), error) {
	if ps.Tempered != nil {
		return func(int) (kernels.TemperedModel, error) { return ps.Tempered(k) }, nil
	}
	t, ok := m.(Temperer)
	if !ok {
		return nil, fmt.Errorf("model %d (%T) has no tempered form for SMC: set SMCPilots.Tempered", k, m)
	}
	tm, err := t.Tempered()
	if err != nil {
		return nil, fmt.Errorf("model %d: tempered form: %w", k, err)
	}
	return func(int) (kernels.TemperedModel, error) { return tm.Clone(), nil }, nil
}

// refresh moves every pilot draw by n NUTS transitions of the posterior,
// one random stream per training block and evaluation group.
func refresh(ctx context.Context, seed uint64, m ppl.Model, k, n int, p *pilot) error {
	nuts, err := kernels.NewNUTS(m.Clone(), p.StepSize, p.Metric)
	if err != nil {
		return err
	}
	move := func(draws [][]float64, rng *rand.Rand) error {
		for i, x := range draws {
			if err := ctx.Err(); err != nil {
				return err
			}
			st, err := nuts.Init(x)
			if err != nil {
				continue // a draw the kernel cannot start from stays as it is
			}
			for range n {
				st, _ = nuts.Step(rng, st)
			}
			draws[i] = append([]float64(nil), st.Position...)
		}
		return nil
	}
	if err := move(p.Train, runs.Stream(seed, fmt.Sprintf("refresh/%d/train", k), 0)); err != nil {
		return err
	}
	for g, grp := range p.Eval {
		if err := move(grp, runs.Stream(seed, fmt.Sprintf("refresh/%d/eval", k), g)); err != nil {
			return err
		}
	}
	return nil
}
