package trj

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Pilot is one model's pilot: unconstrained training draws for the
// transport, evaluation draws in independent groups for the bridge
// estimator, and what the chains' within-model NUTS kernel reuses.
type Pilot struct {
	Train [][]float64
	Eval  [][][]float64
	// StepSize and Metric are the adapted NUTS step size and metric.
	StepSize float64
	Metric   *kernels.Metric
	// LogZ holds one log-evidence estimate per SMC run (SMC pilots only).
	LogZ []float64
	// EvalChains, when above 1, is the number of chains the evaluation
	// groups come from, in consecutive blocks of equal size (NUTS pilots).
	// The groups of one chain share the modes that chain found, so the
	// per-model evidence's standard error is also computed over whole
	// chains and the larger one reported. 0 or 1: the groups are
	// independent (SMC runs, given draws).
	EvalChains int
}

type pilot = Pilot

// EvalDraws returns the evaluation draws of every group in one list.
func (p *Pilot) EvalDraws() [][]float64 {
	var out [][]float64
	for _, g := range p.Eval {
		out = append(out, g...)
	}
	return out
}

func runPilot(ctx context.Context, s *Settings, space *ppl.Space, k int, progress func(done, total int)) (*pilot, error) {
	m, err := space.Model(k)
	if err != nil {
		return nil, err
	}
	if from := s.Pilot.From; from != nil {
		if len(from.Pilots) != space.NumModels() || from.Pilots[k] == nil || len(from.Labels) != space.NumModels() {
			return nil, fmt.Errorf("Pilot.From has no pilot for model %d", k)
		}
		if from.Labels[k] != space.ModelLabel(k) || from.Dims[k] != m.Dim() {
			return nil, fmt.Errorf("Pilot.From's model %d is %q of dimension %d, the space's is %q of dimension %d", k, from.Labels[k], from.Dims[k], space.ModelLabel(k), m.Dim())
		}
		return from.Pilots[k], nil
	}
	return s.Pilot.Method.pilot(ctx, s, m, k, progress)
}

func (ps NUTSPilots) pilot(ctx context.Context, s *Settings, m ppl.Model, k int, progress func(done, total int)) (*pilot, error) {
	total := ps.Chains * (ps.Warmup + ps.Draws)
	done := 0
	res, err := kernels.Sample(ctx, func(int) (kernels.Target, error) { return m.Clone(), nil }, &kernels.SampleSettings{Init: func(_ int, rng *rand.Rand, x []float64) error { return m.Init(rng, x) },
		Chains: ps.Chains, Warmup: ps.Warmup, Draws: ps.Draws, Seed: runs.SubSeed(s.Seed, "pilot", k),
		Progress: func(p kernels.Progress) {
			if progress != nil && p.Chain == 0 && p.Done%100 == 0 {
				done = p.Done * ps.Chains
				progress(done, total)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	groups := s.Bridge.Groups
	if groups == 0 {
		groups = 20
	}
	half := ps.Chains / 2
	perChain := max(groups/half, 1)
	if ps.Draws < perChain {
		return nil, fmt.Errorf("%d draws per chain cannot make %d bridge groups per evaluation chain", ps.Draws, perChain)
	}
	p := &pilot{StepSize: res.Chains[0].StepSize, Metric: res.Chains[0].Metric, EvalChains: ps.Chains - half}
	for c := range res.Chains {
		ch := &res.Chains[c]
		n := len(ch.Info)
		if c < half {
			for i := range n {
				p.Train = append(p.Train, ch.Draw(i))
			}
			continue
		}
		// Consecutive batches of an evaluation chain: long enough that
		// batches are nearly independent for a mixing chain.
		for b := range perChain {
			lo, hi := b*n/perChain, (b+1)*n/perChain
			g := make([][]float64, 0, hi-lo)
			for i := lo; i < hi; i++ {
				g = append(g, ch.Draw(i))
			}
			p.Eval = append(p.Eval, g)
		}
	}
	return p, nil
}

func (ps SMCPilots) pilot(ctx context.Context, s *Settings, m ppl.Model, k int, progress func(done, total int)) (*pilot, error) {
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
		set.Seed = runs.SubSeed(s.Seed, fmt.Sprintf("smc/%d", k), r)
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
		if progress != nil {
			progress(r+1, nruns)
		}
	}
	return p, nil
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

// Temperer is a model with a tempered form for SMC pilots; *ppl.GraphModel
// is one.
type Temperer interface {
	Tempered() (*ppl.TemperedModel, error)
}

func (ps GivenPilots) pilot(_ context.Context, _ *Settings, m ppl.Model, k int, _ func(done, total int)) (*pilot, error) {
	g := ps.Draws[k]
	if len(g) < 2 || len(g)%2 != 0 {
		return nil, fmt.Errorf("%d groups of given draws: need an even number ≥ 2", len(g))
	}
	p := &pilot{}
	for i, grp := range g {
		if len(grp) == 0 {
			return nil, fmt.Errorf("given draw group %d is empty", i)
		}
		for j, x := range grp {
			if len(x) != m.Dim() {
				return nil, fmt.Errorf("given draw %d of group %d has length %d, the model has dimension %d", j, i, len(x), m.Dim())
			}
			if !floats.HasNaN(x) && allFinite(x) {
				continue
			}
			return nil, fmt.Errorf("given draw %d of group %d is not finite", j, i)
		}
		if i < len(g)/2 {
			p.Train = append(p.Train, grp...)
		} else {
			p.Eval = append(p.Eval, grp)
		}
	}
	return p, nil
}

// adaptWithin runs a short NUTS warm-up from the pilot's draws for models
// whose pilot did not adapt a NUTS kernel (SMC or given draws).
func adaptWithin(ctx context.Context, s *Settings, m ppl.Model, k int, p *pilot) error {
	if p.Metric != nil {
		return nil
	}
	start := p.Train[len(p.Train)/2]
	res, err := kernels.Sample(ctx, func(int) (kernels.Target, error) { return m.Clone(), nil }, &kernels.SampleSettings{Init: func(_ int, _ *rand.Rand, x []float64) error { copy(x, start); return nil }, Chains: 1, Warmup: 300, Draws: 1, Seed: runs.SubSeed(s.Seed, "within", k)})
	if err != nil {
		return fmt.Errorf("adapting the within-model NUTS kernel: %w", err)
	}
	p.StepSize, p.Metric = res.Chains[0].StepSize, res.Chains[0].Metric
	return nil
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return false
		}
	}
	return true
}

// logMeanExp returns log((1/n) Σ exp(x_i)) and the delta-method standard
// error of that log-mean from the spread of exp(x_i) across independent
// estimates.
func logMeanExp(x []float64) (float64, float64, error) {
	if len(x) < 2 {
		return 0, 0, errors.New("need two or more estimates")
	}
	top := floats.Max(x)
	w := make([]float64, len(x))
	for i, v := range x {
		w[i] = math.Exp(v - top)
	}
	mean := floats.Sum(w) / float64(len(w))
	var ss float64
	for _, v := range w {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(len(w)-1))
	return top + math.Log(mean), sd / math.Sqrt(float64(len(w))) / mean, nil
}

// refresh moves every pilot draw by n NUTS transitions of the posterior,
// one random stream per training block and evaluation group.
func refresh(ctx context.Context, s *Settings, m ppl.Model, k, n int, p *pilot) error {
	if n <= 0 {
		return nil
	}
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
	if err := move(p.Train, runs.Stream(s.Seed, fmt.Sprintf("refresh/%d/train", k), 0)); err != nil {
		return err
	}
	for g, grp := range p.Eval {
		if err := move(grp, runs.Stream(s.Seed, fmt.Sprintf("refresh/%d/eval", k), g)); err != nil {
			return err
		}
	}
	return nil
}
