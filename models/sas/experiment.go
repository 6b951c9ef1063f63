package sas

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
)

// ExperimentConfig sizes the SAS experiment of the paper's §4.2: flows
// fitted to exact draws of each model, then TRJ chains and repeated bridge
// estimates for each proposal type.
type ExperimentConfig struct {
	// Seed determines every random stream of the run.
	Seed uint64
	// Proposals lists the proposal types to run, in order: a subset of
	// experiment.ProposalExact, ProposalAffine and ProposalRQMA.
	Proposals []string
	// TrainDraws is the number N of exact draws per model that the flows
	// and the random-walk covariances are fitted to.
	TrainDraws int
	// Chains is the number of replicate TRJ chains per proposal type and
	// Steps the length of each; a step is a jump proposal followed by a
	// within-model random walk.
	Chains, Steps int
	// Jump is j_k(·), the same for every k; the paper uses the model
	// probabilities (1/4, 3/4), which make the exact transports
	// rejection-free.
	Jump []float64
	// RWScale multiplies the pilot covariance of model k divided by its
	// dimension to give the random-walk covariance Σ_k; 2.38² is the
	// classic optimal scaling.
	RWScale float64
	// BridgeReplicates is the number of Bartolucci bridge estimates per
	// proposal type, each from one proposal per draw of a fresh evaluation
	// set of EvalDraws exact draws per model; 0 skips them.
	BridgeReplicates, EvalDraws int
	// RQMA and Train configure the RQMA flows; Train.Seed is ignored (each
	// model's flow gets its own seed derived from Seed).
	RQMA  flows.RQMAConfig
	Train flows.TrainOptions
	// ScatterSources systematic draws from model k=1, each with
	// ScatterAux systematic auxiliary values, are proposed into model k=2
	// for the proposal figure (the paper's Figure 2); 0 skips it.
	ScatterSources, ScatterAux int
	// Progress, if non-nil, shows a bar per stage.
	Progress *experiment.Progress
	// ChainIndices and ReplicateIndices, when non-nil, are the chains
	// (0 … Chains−1) and bridge replicates (0 … BridgeReplicates−1) to
	// run, each exactly as in the whole run: the part of a run split over
	// processes (trj run -shard). The pilot, the flows and the scatter
	// are computed in full by every part. nil runs them all.
	ChainIndices, ReplicateIndices []int
}

// rwScale is the classic 2.38² random-walk scaling.
const rwScale = 2.38 * 2.38

// DefaultExperimentConfig returns sizes that run the three proposal types
// in well under two minutes on two cores: the paper's chains (5 chains of
// 10⁴ steps) and flow architecture, N = 5000 training draws, a shortened
// RQMA training schedule, and 20 bridge replicates of 2000 evaluation draws
// per model.
//
// The schedule is 500 Adam steps, minibatch 128 doubled at steps 125 and
// 250, the paper's learning rate 3e-3 decayed by 0.992 per step for 100
// steps and then at twice the paper's later rate (0.9971² per step). It
// takes about 40% of the paper's schedule's CPU time and, measured on
// seeds 1 and 2, gives nearly the same jump acceptance (0.85–0.87 against
// 0.87–0.88) and a bridge-estimate spread within 12% of it.
func DefaultExperimentConfig() ExperimentConfig {
	t := flows.DefaultTrainOptions()
	t.Iterations = 500
	t.DoubleAt = []int{125, 250}
	t.DecaySteps = 100
	t.Decay1 = 0.992
	t.Decay2 = 0.9971 * 0.9971
	t.Workers = 1
	return ExperimentConfig{
		Seed:             1,
		Proposals:        []string{experiment.ProposalAffine, experiment.ProposalRQMA, experiment.ProposalExact},
		TrainDraws:       5000,
		Chains:           5,
		Steps:            10000,
		Jump:             []float64{0.25, 0.75},
		RWScale:          rwScale,
		BridgeReplicates: 20,
		EvalDraws:        2000,
		RQMA:             flows.PaperRQMAConfig(),
		Train:            t,
		ScatterSources:   100,
		ScatterAux:       30,
	}
}

// PaperExperimentConfig returns the paper's sizes: N = 5·10⁴ exact training
// draws per model (§4.2), its RQMA training schedule (1000 Adam steps,
// flows.DefaultTrainOptions), five chains of 10⁴ steps, and evaluation sets
// as large as the training sets.
func PaperExperimentConfig() ExperimentConfig {
	c := DefaultExperimentConfig()
	c.TrainDraws = 50000
	c.EvalDraws = 50000
	c.Train = flows.DefaultTrainOptions()
	c.Train.Workers = 1
	return c
}

// Validate reports a configuration that cannot run.
func (c *ExperimentConfig) Validate() error {
	switch {
	case len(c.Proposals) == 0:
		return errors.New("sas: no proposal types")
	case c.TrainDraws < 10:
		return fmt.Errorf("sas: %d training draws per model, need at least 10", c.TrainDraws)
	case c.Chains < 1 || c.Steps < 1:
		return fmt.Errorf("sas: %d chains of %d steps", c.Chains, c.Steps)
	case !(c.RWScale > 0) || math.IsInf(c.RWScale, 0):
		return fmt.Errorf("sas: random-walk scale %v", c.RWScale)
	case c.BridgeReplicates < 0 || (c.BridgeReplicates > 0 && c.EvalDraws < 1):
		return fmt.Errorf("sas: %d bridge replicates of %d evaluation draws", c.BridgeReplicates, c.EvalDraws)
	case c.ScatterSources < 0 || c.ScatterAux < 0:
		return errors.New("sas: negative scatter sizes")
	}
	if err := checkIndices("chain", c.ChainIndices, c.Chains); err != nil {
		return err
	}
	if err := checkIndices("bridge replicate", c.ReplicateIndices, c.BridgeReplicates); err != nil {
		return err
	}
	return experiment.CheckProposals("sas", c.Proposals, ProposalTypes())
}

// checkIndices refuses indices outside 0 … n−1 or repeated.
func checkIndices(what string, idx []int, n int) error {
	seen := map[int]bool{}
	for _, i := range idx {
		if i < 0 || i >= n || seen[i] {
			return fmt.Errorf("sas: %s index %d repeated or outside 0 … %d", what, i, n-1)
		}
		seen[i] = true
	}
	return nil
}

// indices returns idx, or 0 … n−1 when idx is nil.
func indices(idx []int, n int) []int {
	if idx != nil {
		return idx
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// ProposalTypes lists the proposal types of the SAS experiment.
func ProposalTypes() []string {
	return []string{experiment.ProposalExact, experiment.ProposalAffine, experiment.ProposalRQMA}
}

// ExperimentLabels are the paper's model labels "1" and "2", the keys of
// the experiment's Result.
func (t *Target) ExperimentLabels() []string {
	out := make([]string, t.NumModels())
	for k := range out {
		out[k] = fmt.Sprint(k + 1)
	}
	return out
}

// ExactDraws returns n exact draws from each model: out[k][i] is draw i of
// model k.
func (t *Target) ExactDraws(rng *rand.Rand, n int) ([][][]float64, error) {
	if n < 1 {
		return nil, fmt.Errorf("sas: %d draws", n)
	}
	out := make([][][]float64, t.NumModels())
	for k := range out {
		c := t.comps[k]
		flat := make([]float64, n*c.Dim())
		out[k] = make([][]float64, n)
		for i := range out[k] {
			out[k][i] = flat[i*c.Dim() : (i+1)*c.Dim() : (i+1)*c.Dim()]
			if err := c.Sample(rng, out[k][i]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// TransportSet is one proposal type's per-model transports. Its fitted
// flows are read-only; New hands out copies with their own scratch space,
// one per chain.
type TransportSet struct {
	// Kind is the proposal type.
	Kind string
	// Reports holds the RQMA training reports, one per model (nil for the
	// other kinds).
	Reports []*flows.TrainReport
	exact   *Target
	affine  []*flows.Affine
	rqma    []*flows.RQMA
}

// New returns transports for one goroutine.
func (s *TransportSet) New() []kernels.Transport {
	var out []kernels.Transport
	switch s.Kind {
	case experiment.ProposalExact:
		for _, tr := range s.exact.Transports() {
			out = append(out, tr)
		}
	case experiment.ProposalAffine:
		for _, a := range s.affine {
			out = append(out, a) // stateless
		}
	case experiment.ProposalRQMA:
		for _, f := range s.rqma {
			out = append(out, f.Clone())
		}
	}
	return out
}

// FitTransports fits the transports of one proposal type to pilot draws
// (pilot[k] holds model k's draws): nothing for the exact transports,
// sample means and covariances for the affine ones, and maximum-likelihood
// RQMA flows (both models trained concurrently) otherwise. bar, if non-nil,
// receives one unit per Adam step.
func (t *Target) FitTransports(ctx context.Context, kind string, pilot [][][]float64, cfg ExperimentConfig, bar *experiment.Bar) (*TransportSet, error) {
	if err := t.checkPilot(pilot, 2); err != nil {
		return nil, err
	}
	s := &TransportSet{Kind: kind}
	switch kind {
	case experiment.ProposalExact:
		s.exact = t.Clone()
	case experiment.ProposalAffine:
		for k, d := range pilot {
			a, err := flows.FitAffine(d, nil)
			if err != nil {
				return nil, fmt.Errorf("sas: affine flow of model %d: %w", k+1, err)
			}
			s.affine = append(s.affine, a)
		}
	case experiment.ProposalRQMA:
		s.rqma = make([]*flows.RQMA, len(pilot))
		s.Reports = make([]*flows.TrainReport, len(pilot))
		err := experiment.Parallel(ctx, len(pilot), func(ctx context.Context, k int) error {
			o := cfg.Train
			o.Seed = experiment.Stream(cfg.Seed, "rqma-train", k).Uint64()
			o.Progress = func(flows.Progress) { bar.Add(1) }
			f, rep, err := flows.FitRQMA(ctx, pilot[k], cfg.RQMA, o)
			if err != nil {
				return fmt.Errorf("sas: RQMA flow of model %d: %w", k+1, err)
			}
			s.rqma[k], s.Reports[k] = f, rep
			return ctx.Err()
		})
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("sas: unknown proposal type %q", kind)
	}
	return s, nil
}

// checkPilot reports pilot draws that do not match t or number fewer than
// min per model.
func (t *Target) checkPilot(pilot [][][]float64, min int) error {
	if len(pilot) != t.NumModels() {
		return fmt.Errorf("%w: pilot draws for %d models, target has %d", ErrDimension, len(pilot), t.NumModels())
	}
	for k, d := range pilot {
		if len(d) < min {
			return fmt.Errorf("sas: %d pilot draws of model %d, need at least %d", len(d), k+1, min)
		}
		for i, row := range d {
			if len(row) != t.ModelDim(k) {
				return fmt.Errorf("%w: pilot draw %d of model %d has length %d, want %d", ErrDimension, i, k+1, len(row), t.ModelDim(k))
			}
		}
	}
	return nil
}

// rwCovariances returns Σ_k = scale/n_k · Cov(pilot_k).
func rwCovariances(pilot [][][]float64, scale float64) ([]mat.Symmetric, error) {
	out := make([]mat.Symmetric, len(pilot))
	for k, d := range pilot {
		n := len(d[0])
		m := mat.NewDense(len(d), n, nil)
		for i, row := range d {
			m.SetRow(i, row)
		}
		var cov mat.SymDense
		stat.CovarianceMatrix(&cov, m, nil)
		cov.ScaleSym(scale/float64(n), &cov)
		out[k] = &cov
	}
	return out, nil
}

// RunChains runs cfg.Chains TRJ chains (those of cfg.ChainIndices when it
// is non-nil, in its order) of cfg.Steps steps with the transports of set, each step a jump proposal followed by a within-model
// random walk N(0, Σ_k) with Σ_k from the pilot draws. Chain c draws from
// experiment.Stream(cfg.Seed, "chains-"+kind, c), starts in a uniformly
// chosen model at a uniformly chosen pilot draw, and owns its target and
// transports. bar receives one unit per step.
func (t *Target) RunChains(ctx context.Context, set *TransportSet, pilot [][][]float64, cfg ExperimentConfig, bar *experiment.Bar) ([]*experiment.ChainRun, error) {
	if err := t.checkPilot(pilot, 2); err != nil {
		return nil, err
	}
	if cfg.Chains < 1 || cfg.Steps < 1 {
		return nil, fmt.Errorf("sas: %d chains of %d steps", cfg.Chains, cfg.Steps)
	}
	if set == nil {
		return nil, errors.New("sas: nil transport set")
	}
	cov, err := rwCovariances(pilot, cfg.RWScale)
	if err != nil {
		return nil, err
	}
	jump, err := t.jumpMatrix(cfg.Jump)
	if err != nil {
		return nil, err
	}
	chains := indices(cfg.ChainIndices, cfg.Chains)
	runs := make([]*experiment.ChainRun, len(chains))
	err = experiment.Parallel(ctx, len(chains), func(ctx context.Context, i int) error {
		c := chains[i]
		rng := experiment.Stream(cfg.Seed, "chains-"+set.Kind, c)
		tg := t.Clone()
		within, err := kernels.NewModelRandomWalk(tg, cov)
		if err != nil {
			return err
		}
		trj, err := kernels.NewTRJ(kernels.TRJConfig{Target: tg, Transports: set.New(), Jump: jump, Within: within, Alternate: true})
		if err != nil {
			return err
		}
		k0 := rng.IntN(tg.NumModels())
		s, err := trj.Init(k0, pilot[k0][rng.IntN(len(pilot[k0]))])
		if err != nil {
			return err
		}
		step := func(rng *rand.Rand) (int, kernels.RJInfo) {
			var info kernels.RJInfo
			s, info = trj.Step(rng, s)
			return s.Model, info
		}
		runs[i], err = experiment.RunChain(ctx, rng, cfg.Steps, tg.NumModels(), step, false, bar.Add)
		return err
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// jumpMatrix is j_k(·) = probs for every k, or the model probabilities when
// probs is nil.
func (t *Target) jumpMatrix(probs []float64) ([][]float64, error) {
	if probs == nil {
		for k := range t.comps {
			probs = append(probs, t.ModelProb(k))
		}
	}
	if len(probs) != t.NumModels() {
		return nil, fmt.Errorf("%w: %d jump probabilities for %d models", ErrDimension, len(probs), t.NumModels())
	}
	return kernels.ProportionalJumps(probs)
}

// RunBridge computes cfg.BridgeReplicates Bartolucci bridge estimates (those
// of cfg.ReplicateIndices when it is non-nil, in its order) with the
// transports of set: replicate r draws a fresh evaluation set of
// cfg.EvalDraws exact draws per model and makes one TRJ proposal from each
// (kernels.EvaluationJumps). bar receives one unit per replicate.
func (t *Target) RunBridge(ctx context.Context, set *TransportSet, cfg ExperimentConfig, bar *experiment.Bar) ([]kernels.BridgeEstimate, error) {
	if set == nil {
		return nil, errors.New("sas: nil transport set")
	}
	jump, err := t.jumpMatrix(cfg.Jump)
	if err != nil {
		return nil, err
	}
	prior := make([]float64, t.NumModels())
	for k := range prior {
		prior[k] = t.ModelProb(k)
	}
	reps := indices(cfg.ReplicateIndices, cfg.BridgeReplicates)
	if len(reps) == 0 {
		return nil, nil
	}
	return experiment.BridgeReplicatesOf(ctx, cfg.Seed, "bridge-"+set.Kind, reps, jump, prior,
		func(ctx context.Context, rep int, rng *rand.Rand) ([]kernels.JumpRecord, error) {
			tg := t.Clone()
			trj, err := kernels.NewTRJ(kernels.TRJConfig{Target: tg, Transports: set.New(), Jump: jump})
			if err != nil {
				return nil, err
			}
			eval, err := tg.ExactDraws(rng, cfg.EvalDraws)
			if err != nil {
				return nil, err
			}
			recs, err := kernels.EvaluationJumps(rng, trj, eval)
			bar.Add(1)
			return recs, err
		})
}

// ProposalScatter proposes systematic draws of model k=1 into model k=2 as
// in the paper's Figure 2: source θᵢ = T₁⁻¹(Φ⁻¹((i+½)/sources)) with the
// exact transport, auxiliary uⱼ = Φ⁻¹((j+½)/aux), and proposal
// T₂⁻¹(T₁(θᵢ), uⱼ) with set's transports. It returns the sources paired
// with their auxiliaries, (θᵢ, uⱼ), and the proposals; points whose
// transport fails are left out.
func (t *Target) ProposalScatter(set *TransportSet, sources, aux int) (source, proposed [][]float64, err error) {
	if t.NumModels() != 2 || t.ModelDim(0) != 1 || t.ModelDim(1) != 2 {
		return nil, nil, fmt.Errorf("%w: the proposal scatter needs models of dimensions 1 and 2", ErrDimension)
	}
	if sources < 1 || aux < 1 {
		return nil, nil, fmt.Errorf("sas: %d sources with %d auxiliaries", sources, aux)
	}
	if set == nil {
		return nil, nil, errors.New("sas: nil transport set")
	}
	exact := t.comps[0].Transport()
	tr := set.New()
	var std distuv.Normal
	std.Sigma = 1
	th, z, w, prop := make([]float64, 1), make([]float64, 1), make([]float64, 2), make([]float64, 2)
	for i := range sources {
		if _, err := exact.Inverse([]float64{std.Quantile((float64(i) + 0.5) / float64(sources))}, th); err != nil {
			continue
		}
		if _, err := tr[0].Forward(th, z); err != nil {
			continue
		}
		for j := range aux {
			u := std.Quantile((float64(j) + 0.5) / float64(aux))
			w[0], w[1] = z[0], u
			if _, err := tr[1].Inverse(w, prop); err != nil {
				continue
			}
			source = append(source, []float64{th[0], u})
			proposed = append(proposed, []float64{prop[0], prop[1]})
		}
	}
	return source, proposed, nil
}

// ExperimentResult is the outcome of RunExperiment: the serialisable Result
// and what the figures need.
type ExperimentResult struct {
	*experiment.Result
	// Running[p][c] is chain c's running estimate of π(k=2) under
	// proposal type p.
	Running map[string][][]float64
	// Bridge[p] holds the normalised bridge estimates of π(k=2), one per
	// replicate.
	Bridge map[string][]float64
	// Source holds the systematic (θ, u) pairs of model k=1 and
	// Proposed[p] their proposals into model k=2 under proposal type p.
	Source   [][]float64
	Proposed map[string][][]float64
	// Background holds exact draws of model k=2 for the scatter figure,
	// as many as there are proposals per type.
	Background [][]float64
	// Truth is π(k=2).
	Truth float64
	// Runs[p] and Estimates[p] are the chains and the bridge estimates of
	// proposal type p, in the order of ExperimentConfig.ChainIndices and
	// ReplicateIndices (all of them when those are nil): what merging the
	// parts of a split run needs.
	Runs      map[string][]*experiment.ChainRun
	Estimates map[string][]kernels.BridgeEstimate
}

// RunExperiment runs the SAS experiment on t (normally Paper()): exact
// pilot draws, then for each proposal type fitting, chains, bridge
// replicates and the proposal scatter. The Result holds, per proposal type,
// the chains' visit frequencies averaged over chains with their standard
// errors across chains, the jump acceptance rate, the bridge replicates and
// the stage wall times.
func (t *Target) RunExperiment(ctx context.Context, cfg ExperimentConfig) (*ExperimentResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	labels := t.ExperimentLabels()
	res := &ExperimentResult{
		Result:    experiment.NewResult("sas", cfg.Seed, labels),
		Running:   map[string][][]float64{},
		Bridge:    map[string][]float64{},
		Proposed:  map[string][][]float64{},
		Truth:     t.ModelProb(t.NumModels() - 1),
		Runs:      map[string][]*experiment.ChainRun{},
		Estimates: map[string][]kernels.BridgeEstimate{},
	}
	res.Result.Truth = map[string]experiment.Float{}
	for k, l := range labels {
		res.Result.Truth[l] = experiment.Float(t.ModelProb(k))
	}
	res.Settings = map[string]any{
		"train_draws": cfg.TrainDraws, "chains": cfg.Chains, "steps": cfg.Steps,
		"jump": cfg.Jump, "rw_scale": cfg.RWScale,
		"bridge_replicates": cfg.BridgeReplicates, "eval_draws": cfg.EvalDraws,
		"rqma_layers": cfg.RQMA.Layers, "rqma_bins": cfg.RQMA.Bins, "rqma_hidden_per_dim": cfg.RQMA.HiddenPerDim,
		"train_iterations": cfg.Train.Iterations, "train_batch": cfg.Train.BatchSize,
		"train_double_at": cfg.Train.DoubleAt,
	}
	var shared experiment.Timer
	var pilot [][][]float64
	err := shared.Time("pilot", func() error {
		var err error
		pilot, err = t.ExactDraws(experiment.Stream(cfg.Seed, "pilot", 0), cfg.TrainDraws)
		return err
	})
	if err != nil {
		return nil, err
	}
	if cfg.ScatterSources > 0 && cfg.ScatterAux > 0 {
		// As many background points as proposals per panel.
		bg, err := t.ExactDraws(experiment.Stream(cfg.Seed, "background", 0), cfg.ScatterSources*cfg.ScatterAux)
		if err != nil {
			return nil, err
		}
		res.Background = bg[t.NumModels()-1]
	}
	last := t.NumModels() - 1
	for _, kind := range cfg.Proposals {
		var timer experiment.Timer
		var set *TransportSet
		var bar *experiment.Bar
		if kind == experiment.ProposalRQMA {
			bar = cfg.Progress.Stage("train "+kind, t.NumModels()*cfg.Train.Iterations)
		}
		err := timer.Time(experiment.StageTrain, func() error {
			var err error
			set, err = t.FitTransports(ctx, kind, pilot, cfg, bar)
			return err
		})
		bar.Done()
		if err != nil {
			return nil, err
		}
		var runs []*experiment.ChainRun
		bar = cfg.Progress.Stage("chains "+kind, cfg.Chains*cfg.Steps)
		err = timer.Time(experiment.StageChains, func() error {
			var err error
			runs, err = t.RunChains(ctx, set, pilot, cfg, bar)
			return err
		})
		bar.Done()
		if err != nil {
			return nil, err
		}
		res.Runs[kind] = runs
		p := &experiment.ProposalResult{Estimator: "chains", Seconds: map[string]experiment.Float{}}
		if len(runs) > 0 {
			if p, err = experiment.SummarizeChains(runs, labels); err != nil {
				return nil, err
			}
		}
		for _, r := range runs {
			res.Running[kind] = append(res.Running[kind], r.Running(last))
		}
		if cfg.BridgeReplicates > 0 && (cfg.ReplicateIndices == nil || len(cfg.ReplicateIndices) > 0) {
			var ests []kernels.BridgeEstimate
			bar = cfg.Progress.Stage("bridge "+kind, cfg.BridgeReplicates)
			err = timer.Time(experiment.StageBridge, func() error {
				var err error
				ests, err = t.RunBridge(ctx, set, cfg, bar)
				return err
			})
			bar.Done()
			if err != nil {
				return nil, err
			}
			res.Estimates[kind] = ests
			p.Bridge = experiment.SummarizeBridge(ests, labels)
			p.Bridge.EvalDraws = cfg.EvalDraws
			res.Bridge[kind] = p.Bridge.Values(last)
		}
		if cfg.ScatterSources > 0 && cfg.ScatterAux > 0 {
			src, prop, err := t.ProposalScatter(set, cfg.ScatterSources, cfg.ScatterAux)
			if err != nil {
				return nil, err
			}
			res.Source, res.Proposed[kind] = src, prop
		}
		p.Seconds = timer.Seconds()
		res.Add(kind, p)
	}
	res.Seconds = shared.Seconds()
	return res, nil
}
