package trj

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// Run compares the models of space: it draws pilot samples of every model,
// fits the proposals (Settings.Proposals: by default a transport to each
// model), estimates the model probabilities with the bridge estimator, and
// runs transport reversible-jump chains whose visit frequencies estimate
// them again, with Monte Carlo standard errors. settings may be nil for the
// defaults.
//
// Stages that run per model (pilots, transports) or per chain run in
// parallel. Cancelling ctx stops the run: the result holds the stages that
// finished (Result.Complete is false, Result.Stopped the reason) and the
// error is ctx's. Chains stopped by it keep every finished step, and their
// draws files in OutputDir are marked "# interrupted = reason" (the
// interrupt rule of both workflows, as in selection.Run).
func Run(ctx context.Context, space *ppl.Space, settings *Settings) (*Result, error) {
	res, _, err := RunFitted(ctx, space, settings)
	return res, err
}

// RunFitted is Run that also returns what the run fitted, for later runs to
// reuse (Settings.Pilot.From, Fitted.Save): nil when no pilot finished.
func RunFitted(ctx context.Context, space *ppl.Space, settings *Settings) (*Result, *Fitted, error) {
	return runFitted(ctx, space, settings, nil)
}

// runFitted is RunFitted, or one stage of it when plan is non-nil
// (RunStage).
func runFitted(ctx context.Context, space *ppl.Space, settings *Settings, plan *stagePlan) (*Result, *Fitted, error) {
	if space == nil {
		return nil, nil, errors.New("trj: nil space")
	}
	K := space.NumModels()
	if K < 2 {
		return nil, nil, fmt.Errorf("trj: the space has %d model(s): comparing needs at least 2", K)
	}
	s := settings.withDefaults(K)
	if err := s.validate(space); err != nil {
		return nil, nil, err
	}
	for k := range K {
		m, err := space.Model(k)
		if err != nil {
			return nil, nil, err
		}
		if m.Dim() != space.ModelDim(k) {
			return nil, nil, fmt.Errorf("trj: model %q has dimension %d, the space says %d", space.ModelLabel(k), m.Dim(), space.ModelDim(k))
		}
	}
	if err := s.validateRun(space); err != nil {
		return nil, nil, err
	}
	r := &runner{ctx: ctx, space: space, s: &s, res: newResult(space, &s), plan: plan}
	var unnamed []string
	r.res.Fingerprint, unnamed = fingerprint(space, &s)
	r.res.Settings = describeSettings(&s)
	if (s.Chains.Shard != nil || plan != nil) && len(unnamed) > 0 {
		return nil, nil, fmt.Errorf("trj: a shard's or stage's settings hold functions the fingerprint cannot hash (%v): set Settings.Tag to name them, so that Merge can tell this run's shards from another's", unnamed)
	}
	if s.OutputDir != "" {
		var err error
		if r.out, err = newOutput(s.OutputDir, r.res.Fingerprint); err != nil {
			return nil, nil, err
		}
	}
	err := r.run()
	if err != nil {
		r.res.Stopped = runs.Reason(err)
	}
	if r.out != nil {
		if werr := r.out.finish(r.res); werr != nil && err == nil {
			err = werr
		}
	}
	return r.res, r.fitted, err
}

// runner carries one run through its stages.
type runner struct {
	ctx    context.Context
	space  *ppl.Space
	s      *Settings
	res    *Result
	out    *output
	fitted *Fitted
	pilots []*Pilot
	props  FittedProposals
	plan   *stagePlan // nil: the whole run
}

// run runs the stages in turn; a stage's error stops the run, except the
// bridge's (the chains need no estimate, only jump probabilities).
func (r *runner) run() error {
	if r.plan != nil {
		return r.runStage()
	}
	if err := r.res.time("pilot", r.runPilots); err != nil {
		return err
	}
	if err := r.res.time("transport", r.fit); err != nil {
		return err
	}
	if err := r.timedBridge(); err != nil {
		return err
	}
	return r.timedChains()
}

// timedChains runs the chains, the last stage, and marks the result
// complete when they finish.
func (r *runner) timedChains() error {
	if err := r.res.time("chains", func() error { return r.chains(r.chainProbs()) }); err != nil {
		return err
	}
	r.res.Complete = true
	return nil
}

// timedBridge makes the bridge estimate; its error, other than
// cancellation, is recorded in Result.BridgeError and ends nothing.
func (r *runner) timedBridge() error {
	switch err := r.res.time("bridge", r.bridge); {
	case err != nil && r.ctx.Err() != nil:
		return err
	case err != nil:
		r.res.BridgeError = err.Error()
	}
	// The per-model evidence reads the pilots' evaluation draws and the
	// transports, as the bridge does: the fit stage of a staged run makes
	// both once.
	if err := r.res.time("evidence", r.evidence); err != nil && r.ctx.Err() != nil {
		return err
	}
	return nil
}

// chainProbs is π̂, the bridge estimate the chains start from and jump by:
// uniform when there is none.
func (r *runner) chainProbs() []float64 {
	if r.res.Bridge != nil {
		return r.res.Bridge.Normalized
	}
	probs := make([]float64, len(r.pilots))
	for k := range probs {
		probs[k] = 1 / float64(len(probs))
	}
	return probs
}

// progress returns the Progress hook of one model's or chain's part of a
// stage, nil when there is none.
func (r *runner) progress(stage string, model, chain int) func(done, total int) {
	if r.s.Progress == nil {
		return nil
	}
	return func(done, total int) {
		r.s.Progress(pipeline.Progress{Stage: stage, Model: model, Chain: chain, Done: done, Total: total})
	}
}

// runPilots draws every model's pilot, one model per worker.
func (r *runner) runPilots() error {
	K := r.space.NumModels()
	pilots := make([]*Pilot, K)
	err := parallel.For(r.ctx, K, func(ctx context.Context, k int) error {
		var err error
		pilots[k], err = r.pilot(ctx, k)
		return err
	})
	if err != nil {
		return err
	}
	r.setPilots(pilots)
	return nil
}

// pilot draws model k's pilot.
func (r *runner) pilot(ctx context.Context, k int) (*Pilot, error) {
	s, space := r.s, r.space
	p, err := runPilot(ctx, s, space, k, r.progress("pilot", k, -1))
	if err != nil {
		return nil, fmt.Errorf("trj: pilot of model %q: %w", space.ModelLabel(k), err)
	}
	return p, nil
}

// setPilots records every model's pilot.
func (r *runner) setPilots(pilots []*Pilot) {
	r.pilots = pilots
	r.fitted = &Fitted{Labels: r.res.Labels, Dims: r.res.Dims, Pilot: r.res.Pilot, Pilots: pilots}
	r.res.setEvidence(pilots)
}

// fit fits the proposals to the pilots.
func (r *runner) fit() error {
	props, err := r.s.Proposals.Fit(r.ctx, &FitData{Space: r.space, Pilots: r.pilots, seed: r.s.Seed})
	if err != nil {
		return err
	}
	reports := props.Reports()
	if len(reports) != len(r.pilots) {
		return fmt.Errorf("trj: proposals %q reported on %d models, the space has %d", r.s.Proposals.Name(), len(reports), len(r.pilots))
	}
	r.props, r.fitted.Proposals = props, props
	r.res.Algorithm = props.Algorithm()
	copy(r.res.Transports, reports)
	return nil
}

// bridge makes the bridge estimate from the evaluation draws.
func (r *runner) bridge() error {
	jump := kernels.UniformJumps(len(r.pilots))
	b, err := bridgeEstimate(r.ctx, r.s.Seed, r.pilots, nil, bridgeProposals(r.s.Bridge.Proposals, r.pilots), func(int) (kernels.RJKernel, error) {
		return r.props.Kernel(jump, nil, 0)
	})
	if err != nil {
		return fmt.Errorf("trj: bridge estimate: %w", err)
	}
	r.res.Bridge = b
	return nil
}

// chains runs the transdimensional chains, each a jump proposal with
// j_k ∝ π̂ (probs) then a within-model move.
func (r *runner) chains(probs []float64) error {
	s, space := r.s, r.space
	jump, err := s.chainJumps(probs)
	if err != nil {
		return err
	}
	newWithin, err := s.Chains.Within.Fit(r.ctx, &FitData{Space: space, Pilots: r.pilots, seed: s.Seed})
	if err != nil {
		return fmt.Errorf("trj: within-model move %q: %w", s.Chains.Within.Name(), err)
	}
	r.res.Jump = jump
	start := s.Chains.Start
	if start == nil {
		start = defaultStart(probs, r.pilots)
	}
	var w *drawWriter
	if r.out != nil {
		if w, err = r.out.drawWriter(space, s, r.res.Algorithm); err != nil {
			return err
		}
	}
	rj, err := runChains(r.ctx, s, w, start, func(int) (kernels.RJKernel, error) {
		within, err := newWithin()
		if err != nil {
			return nil, err
		}
		return r.props.Kernel(jump, within, s.Chains.FlowMoves)
	})
	if rj != nil {
		r.res.setChains(rj)
	}
	if w != nil {
		if cerr := w.close(err); err == nil {
			err = cerr
		}
	}
	return err
}

// defaultStart draws chain c's model from the bridge estimate and θ from
// that model's evaluation draws.
func defaultStart(probs []float64, pilots []*pilot) func(int, *rand.Rand) (int, []float64, error) {
	return func(_ int, rng *rand.Rand) (int, []float64, error) {
		u := rng.Float64()
		k := len(probs) - 1
		for i, p := range probs {
			if u < p {
				k = i
				break
			}
			u -= p
		}
		ev := pilots[k].EvalDraws()
		return k, ev[rng.IntN(len(ev))], nil
	}
}

// timed runs f and records its wall time under stage.
func (r *Result) time(stage string, f func() error) error {
	t0 := time.Now()
	err := f()
	r.Timings = append(r.Timings, StageTime{Stage: stage, Seconds: time.Since(t0).Seconds()})
	return err
}
