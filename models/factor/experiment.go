package factor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/ppl"
)

// Truth2 is the posterior probability of the 2-factor model reported by
// Lopes and West (2004), the reference value of the experiment.
const Truth2 = 0.88

// Config sizes the factor-analysis experiment.
type Config struct {
	// DataPath is the CSV file of observations (143 × 6 in the paper);
	// "" means the paper's data, embedded in package datasets.
	DataPath string
	// Seed determines every random stream of the run.
	Seed uint64
	// Proposals lists the proposal types to run, in order: a subset of
	// experiment.ProposalAffine, ProposalRQMA and ProposalLopesWest.
	Proposals []string
	// PilotDraws is N, the number of SMC particles per model and set
	// (training, evaluation): each set is BridgeReplicates independent SMC
	// runs from the prior of N/BridgeReplicates particles.
	PilotDraws int
	// SMC configures the pilot runs (Particles and Seed are set per run).
	SMC kernels.SMCSettings
	// PilotRefresh NUTS transitions at the posterior (trj's
	// SMCPilots.Refresh, with a kernel adapted from the particles) move
	// every SMC particle in Run: SMC's last resampling leaves clusters of
	// near-copies (its moves change one eigen-direction at a time), which
	// flows would overfit and which make evaluation draws dependent.
	// 0 moves none.
	PilotRefresh int
	// RejuvenateSteps random-walk Metropolis steps on the posterior, with
	// the particles' covariance scaled by 2.38²/n, do the same for the
	// study's pilots (RunPilot); Run does not use them.
	RejuvenateSteps int
	// Chains replicate RJMCMC chains of Steps steps per proposal type,
	// each step a jump proposal followed by a within-model random walk
	// N(0, RWScale/n_k·Cov_k) on the unconstrained (log) scale.
	Chains, Steps int
	RWScale       float64
	// BridgeReplicates is the number of independent evaluation groups (SMC
	// runs) per model in Run, over which the bridge estimate's jackknife
	// standard error is taken, each group giving an estimate of its own
	// (the violins); in the study, the number of Bartolucci bridge
	// estimates per proposal type from one proposal per evaluation draw.
	BridgeReplicates int
	// RQMA and Train configure the RQMA flows (the paper's factor-analysis
	// variant); Train.Seed is replaced per model.
	RQMA  flows.RQMAConfig
	Train flows.TrainOptions
	// ScatterSources evaluation draws of the 2-factor model are proposed
	// into the 3-factor model for the proposal figure; 0 skips it.
	ScatterSources int
	// Progress, if non-nil, shows a bar per stage.
	Progress *experiment.Progress
}

// ProposalTypes lists the proposal types of the experiment.
func ProposalTypes() []string {
	return []string{experiment.ProposalAffine, experiment.ProposalRQMA, experiment.ProposalLopesWest}
}

// DefaultConfig returns sizes that keep `trj run factor` to a few minutes
// on two cores: N = 4000 pilot draws per model and set (the paper used
// 2000 and 16000; 4000 rather than 2000 raised the RQMA flows' held-out
// log-likelihood from 12.36 to 12.96 nats for 2 factors and from 7.10 to
// 8.53 for 3, and the mean jump acceptance from 0.10 to 0.16) from SMC
// runs whose temperatures keep a conditional ESS of 0.9·N (the paper's
// 0.5·N leaves the weights of the 2-factor modes to chance: 0.31 to 0.95
// over eight seeds with 1000 particles, against 0.75 to 0.84 over five
// with 0.9) in 10 independent runs per set, each particle then moved by 10
// NUTS transitions; the paper's factor-analysis flow settings (MADE width 8·n against the
// paper's 32·n, validation-based early stopping, at most 3000 Adam steps)
// but a learning rate kept at 3e-3 for 200 steps and then decayed by 0.999
// per step; eight chains of 10⁵ steps (the paper ran five: with five, the
// MCSE itself was unreliable — three sets of five RQMA chains on the same
// pilots and flows of seed 1 gave π(2) = 0.923 ± 0.008, 0.879 ± 0.022 and
// 0.907 ± 0.011 — and trj's default is eight), and the bridge estimate's
// standard error from 10 evaluation groups.
//
// The paper's decay (0.995 for 200 steps, then 0.9971) brings the rate
// below 10⁻⁴ by step 1000, long before the validation loss stops falling:
// on the pilot draws of seed 1 the RQMA flows then stayed below the
// affine ones in held-out log-likelihood (9.45 against 10.92 nats for 2
// factors), while the slower decay stops early at 1200–1400 steps with
// 12.41 and 7.10 nats (affine: 10.92, 2.00) and a mean jump acceptance of
// 0.11 instead of 0.011.
//
// These are trj.AutoTransports' defaults (trj.AutoRQMAConfig,
// trj.AutoTrainOptions), which were taken from here; the experiment trains
// on one worker.
func DefaultConfig() Config {
	t := trj.AutoTrainOptions()
	t.Workers = 1
	rq := trj.AutoRQMAConfig()
	return Config{
		Seed:             1,
		Proposals:        ProposalTypes(),
		PilotDraws:       4000,
		SMC:              kernels.SMCSettings{ESSFraction: 0.9},
		PilotRefresh:     10,
		RejuvenateSteps:  200,
		Chains:           8,
		Steps:            100000,
		RWScale:          2.38 * 2.38,
		BridgeReplicates: 10,
		RQMA:             rq,
		Train:            t,
		ScatterSources:   300,
	}
}

// PaperConfig returns the paper's sizes: N = 16000 pilot draws per model
// and set, the full factor-analysis flow settings, chains of 10⁵ steps. It
// keeps DefaultConfig's SMC pilot (conditional ESS 0.9·N, refresh moves).
func PaperConfig() Config {
	c := DefaultConfig()
	c.PilotDraws = 16000
	c.Steps = 100000
	c.Train = PaperTrainOptions()
	c.Train.Workers = 1
	c.RQMA = PaperRQMAConfig()
	return c
}

// MinSteps is the fewest steps per chain the experiment runs, the fewest
// trj.Run takes.
const MinSteps = 4

// Validate reports a configuration that cannot run.
func (c *Config) Validate() error {
	switch {
	case len(c.Proposals) == 0:
		return errors.New("factor: no proposal types")
	case c.PilotDraws < 50:
		return fmt.Errorf("factor: %d pilot draws per model, need at least 50", c.PilotDraws)
	case c.Chains < 0 || c.Steps < 0 || (c.Chains > 0) != (c.Steps > 0):
		return fmt.Errorf("factor: %d chains of %d steps", c.Chains, c.Steps)
	case c.Chains > 0 && c.Steps < MinSteps:
		return fmt.Errorf("factor: chains of %d steps: need at least %d", c.Steps, MinSteps)
	case !(c.RWScale > 0) || math.IsInf(c.RWScale, 0):
		return fmt.Errorf("factor: random-walk scale %v", c.RWScale)
	case c.BridgeReplicates < 0:
		return fmt.Errorf("factor: %d bridge replicates", c.BridgeReplicates)
	case c.ScatterSources < 0:
		return errors.New("factor: negative scatter size")
	case c.RejuvenateSteps < 0 || c.PilotRefresh < 0:
		return fmt.Errorf("factor: %d rejuvenation steps, %d refresh moves", c.RejuvenateSteps, c.PilotRefresh)
	case c.BridgeReplicates > 0 && c.PilotDraws/c.BridgeReplicates < 25:
		return fmt.Errorf("factor: %d pilot draws in %d groups: need at least 25 per group", c.PilotDraws, c.BridgeReplicates)
	}
	return experiment.CheckProposals("factor", c.Proposals, ProposalTypes())
}

// Result is the outcome of Run: the serialisable Result and what the
// figures need.
type Result struct {
	*experiment.Result
	// Running[p][c] is chain c's running estimate of π(2 factors).
	Running map[string][][]float64
	// Bridge[p] holds the normalised bridge estimates of π(2 factors), one
	// per evaluation group.
	Bridge map[string][]float64
	// Source holds 2-factor evaluation draws (constrained loadings) and
	// Proposed[p] their proposals into the 3-factor model; Background
	// holds 3-factor evaluation draws. Each row is B row-major (6×3,
	// zero-padded for 2 factors).
	Source, Background [][]float64
	Proposed           map[string][][]float64
	// Runs[p] is proposal type p's trj.Run result.
	Runs map[string]*trj.Result
}

// Settings returns the trj.Run settings of one proposal type and the space
// it runs on (y the observations): SMC pilots from the exact prior
// (TemperedFactory) in 2·BridgeReplicates independent runs of
// PilotDraws/BridgeReplicates particles per model, half training the
// proposals and half evaluating them, each particle then moved by
// PilotRefresh NUTS transitions (from is an earlier result whose pilots are
// reused, or nil); TRJ with affine or RQMA flows and the map h̄ of
// Alignment, or the Lopes–West independence proposals; chains of
// Chains × Steps steps, each a jump then the random walk
// N(0, RWScale/n_k·Σ̂_k), started at pilot draws with no warm-up.
func Settings(y *mat.Dense, kind string, cfg Config, from *trj.Fitted) (*ppl.Space, *trj.Settings, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	space, err := NewSpace(y)
	if err != nil {
		return nil, nil, err
	}
	_, p := y.Dims()
	lays := make([]Layout, len(factors))
	tempered := make([]func(int) (kernels.TemperedModel, error), len(factors))
	for k, nf := range factors {
		lays[k] = NewLayout(p, nf)
		if tempered[k], err = TemperedFactory(y, nf); err != nil {
			return nil, nil, err
		}
	}
	smc := cfg.SMC
	smc.Particles = cfg.PilotDraws / cfg.BridgeReplicates
	refresh := cfg.PilotRefresh
	if refresh == 0 {
		refresh = -1 // trj's zero is its default
	}
	s := &trj.Settings{
		Seed: cfg.Seed,
		Pilot: trj.PilotSettings{Method: trj.SMCPilots{Runs: 2 * cfg.BridgeReplicates, SMC: &smc, Refresh: refresh,
			Tempered: func(k int) (kernels.TemperedModel, error) { return tempered[k](0) }}, From: from},
		// The paper's chains: a fixed length and no flow moves, whose
		// independence proposals would hide the differences between the
		// jump proposals that the experiment compares.
		Chains: trj.ChainSettings{Chains: cfg.Chains, Steps: cfg.Steps, Warmup: -1, Within: trj.RandomWalkMove{Scale: cfg.RWScale},
			MaxSteps: cfg.Steps, FlowMoves: -1},
	}
	perms := [][][]int{{nil, Alignment(lays[0], lays[1])}, {nil, nil}}
	switch kind {
	case experiment.ProposalAffine:
		s.Proposals = &trj.AffineTransports{Permutations: perms}
	case experiment.ProposalRQMA:
		rq, tr := cfg.RQMA, cfg.Train
		s.Proposals = &trj.RQMATransports{RQMA: &rq, Train: &tr, Permutations: perms}
	case experiment.ProposalLopesWest:
		s.Proposals = &trj.Independence{Proposal: func(k int, train [][]float64) (kernels.IndependenceProposal, error) {
			return newLopesWest(train, lays[k])
		}}
	default:
		return nil, nil, fmt.Errorf("factor: unknown proposal type %q", kind)
	}
	return space, s, nil
}

// Run runs the experiment with trj.Run, once per proposal type: SMC pilots
// (the first proposal type's run makes them, the others reuse them), the
// proposals fitted to the training draws, the bridge estimate with its
// jackknife standard error over the BridgeReplicates evaluation groups,
// RJMCMC chains, and the proposal scatter. Model probabilities in the
// Result are the chains' visit frequencies ± MCSE (from the indicators'
// ESS across chains; the standard error of the chains' frequencies when
// some chain never switched model); Bridge holds each evaluation group's
// own estimate. On cancellation it returns the proposal types that
// finished.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.BridgeReplicates < 2 {
		return nil, fmt.Errorf("factor: %d bridge replicates (evaluation groups): the standard error needs at least 2", cfg.BridgeReplicates)
	}
	y, dataName, err := loadConfigData(cfg.DataPath)
	if err != nil {
		return nil, err
	}
	_, p := y.Dims()
	labels := []string{"2", "3"}
	res := &Result{
		Result:   experiment.NewResult("factor", cfg.Seed, labels),
		Running:  map[string][][]float64{},
		Bridge:   map[string][]float64{},
		Proposed: map[string][][]float64{},
		Runs:     map[string]*trj.Result{},
	}
	res.Result.Truth = map[string]experiment.Float{"2": Truth2, "3": 1 - Truth2}
	l2, l3 := NewLayout(p, 2), NewLayout(p, 3)
	var first *trj.Fitted
	for _, kind := range cfg.Proposals {
		space, set, err := Settings(y, kind, cfg, first)
		if err != nil {
			return res, err
		}
		cfg.Progress.Logf("factor: %s", kind)
		r, fitted, err := trj.RunFitted(ctx, space, set)
		if err != nil {
			return res, fmt.Errorf("factor: %s: %w", kind, err)
		}
		res.Runs[kind] = r
		if first == nil {
			first = fitted
			pl := fitted.Pilots
			w := [2]float64{modeWeight(l2, pl[0].Train), modeWeight(l2, pl[0].EvalDraws())}
			cfg.Progress.Logf("2-factor pilot: weight of the mode with positive factor-2 loadings %.3f (training draws), %.3f (evaluation draws)", w[0], w[1])
			res.Settings = map[string]any{
				"data": dataName, "pilot_draws": cfg.PilotDraws, "smc_runs": 2 * cfg.BridgeReplicates, "pilot_refresh": cfg.PilotRefresh,
				"train_draws": len(pl[0].Train), "eval_draws": len(pl[0].EvalDraws()), "bridge_groups": cfg.BridgeReplicates,
				"chains": cfg.Chains, "steps": cfg.Steps, "rw_scale": cfg.RWScale,
				"rqma_layers": cfg.RQMA.Layers, "rqma_bins": cfg.RQMA.Bins, "rqma_hidden_per_dim": cfg.RQMA.HiddenPerDim,
				"rqma_sigmoid_scale": cfg.RQMA.SigmoidScale, "train_iterations": cfg.Train.Iterations, "train_batch": cfg.Train.BatchSize,
				"pilot_mode_weight_train": w[0], "pilot_mode_weight_eval": w[1],
				"smc_log_evidence": r.Evidence.LogZ, "smc_log_evidence_se": r.Evidence.LogZSE,
				"smc_model_probabilities": r.Evidence.P, "smc_model_probabilities_se": r.Evidence.SE,
			}
			for _, t := range r.Timings {
				if t.Stage == "pilot" {
					res.Seconds = map[string]experiment.Float{"pilot": experiment.Float(t.Seconds)}
				}
			}
			if cfg.ScatterSources > 0 {
				ev := pl[0].EvalDraws()
				for _, d := range ev[:min(cfg.ScatterSources, len(ev))] {
					res.Source = append(res.Source, loadingsRow(l2, d))
				}
				for _, d := range pl[1].EvalDraws() {
					res.Background = append(res.Background, loadingsRow(l3, d))
				}
			}
		}
		pr, running, err := summarize(r, fitted.Pilots, labels)
		if err != nil {
			return res, err
		}
		res.Running[kind] = running
		res.Bridge[kind] = pr.Bridge.Values(0)
		// The pooled estimate over all evaluation groups and its jackknife
		// standard error (the table shows the groups' own estimates).
		res.Settings["bridge_pooled_"+kind] = r.Bridge.Normalized
		res.Settings["bridge_pooled_se_"+kind] = r.Bridge.NormalizedSE
		cfg.Progress.Logf("factor: %s: bridge estimate over all groups π(2) = %.4f ± %.4f (jackknife)", kind, r.Bridge.Normalized[0], r.Bridge.NormalizedSE[0])
		if cfg.ScatterSources > 0 {
			src := first.Pilots[0].EvalDraws()[:len(res.Source)]
			prop, err := proposeScatter(kind, fitted, experiment.Stream(cfg.Seed, "scatter-"+kind, 0), src, l2, l3)
			if err != nil {
				return res, err
			}
			res.Proposed[kind] = prop
		}
		res.Add(kind, pr)
	}
	return res, nil
}

// summarize turns one trj.Run result into the experiment's ProposalResult
// and each chain's running estimate of π(model 0).
func summarize(r *trj.Result, pilots []*trj.Pilot, labels []string) (*experiment.ProposalResult, [][]float64, error) {
	var runs []*experiment.ChainRun
	for _, c := range r.Chains.Chains {
		cr := &experiment.ChainRun{Models: c.Models, NumModels: len(labels)}
		for from, row := range c.Proposed {
			for to, n := range row {
				if from != to {
					cr.Jumps += n
					cr.Accepted += c.Accepted[from][to]
				}
			}
		}
		runs = append(runs, cr)
	}
	pr, err := experiment.SummarizeChains(runs, labels)
	if err != nil {
		return nil, nil, err
	}
	for k, l := range labels {
		if c := r.Chain[k]; c.Mixed {
			pr.ModelProbabilities[l], pr.Stderr[l] = experiment.Float(c.P), experiment.Float(c.MCSE)
		}
	}
	groups := experiment.SucceededGroups(r.Bridge.PerGroup, r.Bridge.PerGroupOK)
	pr.Bridge = experiment.SummarizeBridge(groups, labels)
	pr.Bridge.Failed = len(r.Bridge.PerGroupOK) - len(groups)
	if len(pilots) > 0 && len(pilots[0].Eval) > 0 {
		pr.Bridge.EvalDraws = len(pilots[0].Eval[0])
	}
	for _, t := range r.Timings {
		pr.SetStageSeconds(t.Stage, t.Seconds)
	}
	var running [][]float64
	for _, c := range runs {
		running = append(running, c.Running(0))
	}
	return pr, running, nil
}

// modeWeight is the fraction of 2-factor draws in the mode with positive
// factor-2 loadings of variables 3..6.
func modeWeight(l Layout, draws [][]float64) float64 {
	pos := 0
	for _, d := range draws {
		if l.Mode(d) > 0 {
			pos++
		}
	}
	return float64(pos) / float64(max(len(draws), 1))
}

// loadingsRow returns B (6×3 row-major, zero-padded) of the point u.
func loadingsRow(lay Layout, u []float64) []float64 {
	b := lay.Loadings(u, nil)
	out := make([]float64, lay.P*3)
	for i := 0; i < lay.P; i++ {
		for j := 0; j < lay.K && j < 3; j++ {
			out[i*3+j] = b.At(i, j)
		}
	}
	return out
}

// proposeScatter proposes each 2-factor source draw into the 3-factor
// model (TRJ: T₃⁻¹(h̄(T₂(θ), u)) with u ~ N(0, I); Lopes–West: a draw of q₃
// fitted to the 3-factor training draws, which ignores θ) and returns the
// proposals' loadings rows.
func proposeScatter(kind string, r *trj.Fitted, rng *rand.Rand, src [][]float64, l2, l3 Layout) ([][]float64, error) {
	th := make([]float64, l3.Dim())
	var out [][]float64
	if kind == experiment.ProposalLopesWest {
		q, err := newLopesWest(r.Pilots[1].Train, l3)
		if err != nil {
			return nil, err
		}
		for range src {
			if err := q.Sample(rng, th); err == nil {
				out = append(out, loadingsRow(l3, th))
			}
		}
		return out, nil
	}
	t2, t3 := r.Transport(0), r.Transport(1)
	if t2 == nil || t3 == nil {
		return nil, fmt.Errorf("factor: %s run has no fitted transports", kind)
	}
	perm := Alignment(l2, l3)
	z2, z3 := make([]float64, l2.Dim()), make([]float64, l3.Dim())
	for _, d := range src {
		if _, err := t2.Forward(d, z2); err != nil {
			continue
		}
		for i, j := range perm {
			if j < l2.Dim() {
				z3[i] = z2[j]
			} else {
				z3[i] = rng.NormFloat64()
			}
		}
		if _, err := t3.Inverse(z3, th); err != nil {
			continue
		}
		out = append(out, loadingsRow(l3, th))
	}
	return out, nil
}
