package sas

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/pipeline"
)

// Config sizes the SAS experiment of the paper's §4.2, which runs
// trj.Run once per proposal type on exact pilot draws.
type Config struct {
	// Seed determines every random stream of the run.
	Seed uint64
	// Proposals lists the proposal types to run, in order: a subset of
	// experiment.ProposalExact, ProposalAffine and ProposalRQMA.
	Proposals []string
	// TrainDraws is the number N of exact draws per model that the flows
	// and the random-walk covariances are fitted to.
	TrainDraws int
	// Chains is the number of TRJ chains per proposal type and Steps the
	// length of each (no warm-up: they start at exact draws); a step is a
	// jump proposal followed by a within-model random walk.
	Chains, Steps int
	// Jump is j_k(·), the same for every k (trj.ChainSettings.Jump); the
	// paper uses the model probabilities (1/4, 3/4), which make the exact
	// transports rejection-free. nil means the model probabilities.
	Jump []float64
	// RWScale multiplies the pilot covariance of model k divided by its
	// dimension to give the random-walk covariance Σ_k; 2.38² is the
	// classic optimal scaling.
	RWScale float64
	// BridgeReplicates is the number of evaluation sets, each of EvalDraws
	// fresh exact draws per model: trj.Run's bridge groups. Each set gives
	// a bridge estimate of its own (one proposal per draw); together they
	// give the pooled estimate and its jackknife standard error. At least 2.
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
	// Shard, when non-nil, are the chains (0 … Chains−1) to run,
	// each exactly as in the whole run: the part of a run split over
	// processes (trj run -shard; Merge joins the parts). The
	// pilot, the flows, the bridge and the scatter are computed in full by
	// every part, unless the run is staged (Stage). nil runs them all.
	Shard []int
	// Stage, when non-zero, runs one stage of the experiment
	// (trj.RunStage) for every proposal type, with its files in
	// StageDir/TYPE: the pilots of the models ModelIndices (0-based; all
	// when nil), the fit of the proposals with the bridge estimate, or the
	// chains (of Shard), which read the others' files instead of
	// computing them again. The pilot and fit stages return a Result
	// without proposal results; the chains stages' Results merge (Merge)
	// into the whole run's.
	Stage        trj.Stage
	StageDir     string
	ModelIndices []int
}

// rwScale is the classic 2.38² random-walk scaling.
const rwScale = 2.38 * 2.38

// DefaultConfig returns sizes that run the three proposal types
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
func DefaultConfig() Config {
	t := flows.DefaultTrainOptions()
	t.Iterations = 500
	t.DoubleAt = []int{125, 250}
	t.DecaySteps = 100
	t.Decay1 = 0.992
	t.Decay2 = 0.9971 * 0.9971
	t.Workers = 1
	return Config{
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

// PaperConfig returns the paper's sizes: N = 5·10⁴ exact training
// draws per model (§4.2), its RQMA training schedule (1000 Adam steps,
// flows.DefaultTrainOptions), five chains of 10⁴ steps, and evaluation sets
// as large as the training sets.
func PaperConfig() Config {
	c := DefaultConfig()
	c.TrainDraws = 50000
	c.EvalDraws = 50000
	c.Train = flows.DefaultTrainOptions()
	c.Train.Workers = 1
	return c
}

// MinSteps is the fewest steps per chain the experiment runs, the fewest
// trj.Run takes.
const MinSteps = 4

// Validate reports a configuration that cannot run.
func (c *Config) Validate() error {
	switch {
	case len(c.Proposals) == 0:
		return errors.New("sas: no proposal types")
	case c.TrainDraws < 10:
		return fmt.Errorf("sas: %d training draws per model, need at least 10", c.TrainDraws)
	case c.Chains < 1 || c.Steps < MinSteps:
		return fmt.Errorf("sas: %d chains of %d steps: need at least 1 chain of at least %d steps", c.Chains, c.Steps, MinSteps)
	case !(c.RWScale > 0) || math.IsInf(c.RWScale, 0):
		return fmt.Errorf("sas: random-walk scale %v", c.RWScale)
	case c.BridgeReplicates < 2 || c.EvalDraws < 1:
		return fmt.Errorf("sas: %d bridge replicates of %d evaluation draws: need at least 2 of at least 1", c.BridgeReplicates, c.EvalDraws)
	case c.TrainDraws < c.BridgeReplicates:
		return fmt.Errorf("sas: %d training draws cannot fill %d training groups", c.TrainDraws, c.BridgeReplicates)
	case c.ScatterSources < 0 || c.ScatterAux < 0:
		return errors.New("sas: negative scatter sizes")
	}
	if err := checkIndices("chain", c.Shard, c.Chains); err != nil {
		return err
	}
	if c.Stage != 0 && c.StageDir == "" {
		return fmt.Errorf("sas: the %s stage needs a stage folder", c.Stage)
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

// ProposalTypes lists the proposal types of the SAS experiment.
func ProposalTypes() []string {
	return []string{experiment.ProposalExact, experiment.ProposalAffine, experiment.ProposalRQMA}
}

// Labels are the paper's model labels "1" and "2", the keys of
// the experiment's Result.
func (t *Target) Labels() []string {
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

// ProposalScatter proposes systematic draws of model k=1 into model k=2 as
// in the paper's Figure 2: source θᵢ = T₁⁻¹(Φ⁻¹((i+½)/sources)) with the
// exact transport, auxiliary uⱼ = Φ⁻¹((j+½)/aux), and proposal
// T₂⁻¹(T₁(θᵢ), uⱼ) with the transports tr (one per model, used by this
// goroutine only). It returns the sources paired with their auxiliaries,
// (θᵢ, uⱼ), and the proposals; points whose transport fails are left out.
func (t *Target) ProposalScatter(tr []kernels.Transport, sources, aux int) (source, proposed [][]float64, err error) {
	if t.NumModels() != 2 || t.ModelDim(0) != 1 || t.ModelDim(1) != 2 {
		return nil, nil, fmt.Errorf("%w: the proposal scatter needs models of dimensions 1 and 2", ErrDimension)
	}
	if sources < 1 || aux < 1 {
		return nil, nil, fmt.Errorf("sas: %d sources with %d auxiliaries", sources, aux)
	}
	if len(tr) != 2 || tr[0] == nil || tr[1] == nil || tr[0].Dim() != 1 || tr[1].Dim() != 2 {
		return nil, nil, fmt.Errorf("%w: the proposal scatter needs transports of dimensions 1 and 2", ErrDimension)
	}
	exact := t.comps[0].Transport()
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

// PilotDraws returns the exact pilot draws of trj.GivenPilots.Draws:
// for each model, BridgeReplicates training groups that share TrainDraws
// draws, then BridgeReplicates evaluation groups of EvalDraws draws each.
func (t *Target) PilotDraws(cfg Config) ([][][][]float64, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	G := cfg.BridgeReplicates
	train, err := t.ExactDraws(experiment.Stream(cfg.Seed, "pilot", 0), cfg.TrainDraws)
	if err != nil {
		return nil, err
	}
	given := make([][][][]float64, t.NumModels())
	for k := range given {
		for g := range G {
			given[k] = append(given[k], train[k][g*cfg.TrainDraws/G:(g+1)*cfg.TrainDraws/G])
		}
	}
	for g := range G {
		eval, err := t.ExactDraws(experiment.Stream(cfg.Seed, "eval", g), cfg.EvalDraws)
		if err != nil {
			return nil, err
		}
		for k := range given {
			given[k] = append(given[k], eval[k])
		}
	}
	return given, nil
}

// Settings returns the trj.Run settings of one proposal type on pilot
// draws given (PilotDraws): the exact transports as user transports, or
// affine or RQMA flows fitted to the training draws; chains of cfg.Steps
// steps without warm-up, alternating a jump with the fixed probabilities
// cfg.Jump and a random walk N(0, Σ_k).
func (t *Target) Settings(kind string, cfg Config, given [][][][]float64) (*trj.Settings, error) {
	jump := cfg.Jump
	if jump == nil {
		for k := range t.comps {
			jump = append(jump, t.ModelProb(k))
		}
	}
	s := &trj.Settings{
		Seed:  cfg.Seed,
		Pilot: trj.PilotSettings{Method: trj.GivenPilots{Draws: given}},
		Chains: trj.ChainSettings{
			Chains: cfg.Chains, Steps: cfg.Steps, Warmup: -1, Shard: cfg.Shard,
			Jump: jump, Within: trj.RandomWalkMove{Scale: cfg.RWScale},
			// The paper's chains: a fixed length (so shards merge into the
			// whole run) and no flow moves, whose independence proposals
			// would hide the differences between the jump proposals.
			MaxSteps: cfg.Steps, FlowMoves: -1,
		},
	}
	switch kind {
	case experiment.ProposalExact:
		exact := t.Transports()
		s.Proposals = &trj.UserTransports{New: func(k int) (kernels.Transport, error) { return exact[k].Clone(), nil }}
		s.Tag = "sas exact transports" // names New for the shards' fingerprint
	case experiment.ProposalAffine:
		s.Proposals = &trj.AffineTransports{}
	case experiment.ProposalRQMA:
		train := cfg.Train
		s.Proposals = &trj.RQMATransports{RQMA: &cfg.RQMA, Train: &train}
	default:
		return nil, fmt.Errorf("sas: unknown proposal type %q", kind)
	}
	return s, nil
}

// Result is the outcome of Run: the serialisable Result
// and what the figures and the merging of shards need.
type Result struct {
	*experiment.Result
	// Running[p][c] is chain c's running estimate of π(k=2) under
	// proposal type p.
	Running map[string][][]float64
	// Bridge[p] holds the normalised bridge estimates of π(k=2), one per
	// evaluation set.
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
	// Runs[p] is proposal type p's trj.Run result, with the chains of
	// Config.Shard (all of them when nil).
	Runs map[string]*trj.Result
}

// Run runs the SAS experiment on t (normally Paper()): exact
// pilot draws, then trj.Run for each proposal type (transports, bridge
// estimate, chains) and the proposal scatter. The Result holds, per
// proposal type, the chains' visit frequencies pooled over the chains with
// their MCSE (from the indicators' ESS across chains), each chain's own
// summary, the jump acceptance rate, the bridge estimate of each
// evaluation set and the stage wall times.
func (t *Target) Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	labels := t.Labels()
	res := &Result{
		Result:   experiment.NewResult("sas", cfg.Seed, labels),
		Running:  map[string][][]float64{},
		Bridge:   map[string][]float64{},
		Proposed: map[string][][]float64{},
		Truth:    t.ModelProb(t.NumModels() - 1),
		Runs:     map[string]*trj.Result{},
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
	space, err := t.NewSpace()
	if err != nil {
		return nil, err
	}
	var shared experiment.Timer
	var given [][][][]float64
	err = shared.Time("pilot", func() error {
		var err error
		given, err = t.PilotDraws(cfg)
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Seconds = shared.Seconds()
	chains := cfg.Stage == 0 || cfg.Stage == trj.StageChains
	if chains && cfg.ScatterSources > 0 && cfg.ScatterAux > 0 {
		// As many background points as proposals per panel.
		bg, err := t.ExactDraws(experiment.Stream(cfg.Seed, "background", 0), cfg.ScatterSources*cfg.ScatterAux)
		if err != nil {
			return nil, err
		}
		res.Background = bg[t.NumModels()-1]
	}
	for _, kind := range cfg.Proposals {
		s, err := t.Settings(kind, cfg, given)
		if err != nil {
			return nil, err
		}
		nc := cfg.Chains
		if cfg.Shard != nil {
			nc = len(cfg.Shard)
		}
		bars := newBars(cfg.Progress, kind, nc)
		if kind == experiment.ProposalRQMA && (cfg.Stage == 0 || cfg.Stage == trj.StageFit) {
			bars.train = cfg.Progress.Stage("train "+kind, t.NumModels()*cfg.Train.Iterations)
			if rq, ok := s.Proposals.(*trj.RQMATransports); ok {
				rq.Train.Progress = func(flows.Progress) { bars.train.Add(1) }
			}
		}
		s.Progress = bars.report
		var r *trj.Result
		var fitted *trj.Fitted
		switch cfg.Stage {
		case 0:
			r, fitted, err = trj.RunFitted(ctx, space, s)
		case trj.StagePilots:
			_, _, err = trj.RunStage(ctx, space, s, cfg.Stage, filepath.Join(cfg.StageDir, kind), cfg.ModelIndices)
		default:
			r, fitted, err = trj.RunStage(ctx, space, s, cfg.Stage, filepath.Join(cfg.StageDir, kind), nil)
		}
		bars.done()
		if err != nil {
			return res, fmt.Errorf("sas: %s: %w", kind, err)
		}
		if !chains {
			continue
		}
		res.Runs[kind] = r
		p, running, err := summarize(r, labels)
		if err != nil {
			return res, fmt.Errorf("sas: %s: %w", kind, err)
		}
		res.Running[kind] = running
		groups := experiment.SucceededGroups(r.Bridge.PerGroup, r.Bridge.PerGroupOK)
		p.Bridge = experiment.SummarizeBridge(groups, labels)
		p.Bridge.Replicates = r.Bridge.Groups
		p.Bridge.Failed = r.Bridge.Groups - len(groups)
		p.Bridge.EvalDraws = cfg.EvalDraws
		res.Bridge[kind] = p.Bridge.Values(t.NumModels() - 1)
		for _, st := range r.Timings {
			p.SetStageSeconds(st.Stage, st.Seconds)
		}
		if cfg.ScatterSources > 0 && cfg.ScatterAux > 0 {
			tr := make([]kernels.Transport, t.NumModels())
			for k := range tr {
				tr[k] = cloneTransport(fitted.Transport(k))
			}
			src, prop, err := t.ProposalScatter(tr, cfg.ScatterSources, cfg.ScatterAux)
			if err != nil {
				return res, err
			}
			res.Source, res.Proposed[kind] = src, prop
		}
		res.Add(kind, p)
	}
	return res, nil
}

// cloneTransport returns a copy of a fitted transport for this goroutine
// (Fitted.Transport hands out the run's own).
func cloneTransport(t kernels.Transport) kernels.Transport {
	switch t := t.(type) {
	case *Transport:
		return t.Clone()
	case *flows.RQMA:
		return t.Clone()
	case *flows.Affine:
		return t.Clone()
	}
	return t // nil stays nil
}

// summarize turns one trj.Run result into a ProposalResult: the pooled
// visit frequencies with their MCSE, each chain's summary, the jump
// acceptance rate; and each chain's running estimate of the last model's
// probability.
func summarize(r *trj.Result, labels []string) (*experiment.ProposalResult, [][]float64, error) {
	if r.Chains == nil || len(r.Chain) != len(labels) {
		return nil, nil, errors.New("the run has no chains")
	}
	var runs []*experiment.ChainRun
	var running [][]float64
	last := len(labels) - 1
	for _, c := range r.Chains.Chains {
		cr := &experiment.ChainRun{Models: c.Models, NumModels: len(labels)}
		for from := range c.Proposed {
			for to := range c.Proposed[from] {
				cr.Jumps += c.Proposed[from][to]
				cr.Accepted += c.Accepted[from][to]
			}
		}
		runs = append(runs, cr)
		running = append(running, cr.Running(last))
	}
	p, err := experiment.SummarizeChains(runs, labels)
	if err != nil {
		return nil, nil, err
	}
	// The pooled estimate and its MCSE from the indicators' ESS across
	// chains, rather than the spread of a few chains' means.
	var never, short []string
	for k, l := range labels {
		p.ModelProbabilities[l] = experiment.Float(r.Chain[k].P)
		p.Stderr[l] = experiment.Float(math.NaN())
		switch {
		case r.Chain[k].Mixed:
			p.Stderr[l] = experiment.Float(r.Chain[k].MCSE)
		case r.Chain[k].P == 0 || r.Chain[k].P == 1:
			never = append(never, l)
		default:
			short = append(short, l)
		}
	}
	if len(never)+len(short) > 0 {
		var acc int
		for _, c := range runs {
			acc += c.Accepted
		}
		var why []string
		if len(never) > 0 {
			why = append(why, fmt.Sprintf("the chains never entered or never left %s", modelList(never)))
		}
		if len(short) > 0 {
			why = append(why, fmt.Sprintf("the indicator series of %s are too short or too constant within chains for an effective sample size", modelList(short)))
		}
		p.StderrNote = fmt.Sprintf("no Monte Carlo standard error: %s (%d accepted jumps in %d steps); run more steps",
			strings.Join(why, "; "), acc, r.Chain[0].Steps)
	}
	return p, running, nil
}

// modelList names the models labels: "model 1", "models 1, 2".
func modelList(labels []string) string {
	if len(labels) == 1 {
		return "model " + labels[0]
	}
	return "models " + strings.Join(labels, ", ")
}

// bars turns trj.Run's progress reports into the experiment's bars: one for
// the RQMA training (when set) and one for the chains.
type bars struct {
	p      *experiment.Progress
	kind   string
	n      int // chains this process runs
	mu     sync.Mutex
	train  *experiment.Bar
	chains *experiment.Bar
	last   map[int]int // steps done by chain
}

func newBars(p *experiment.Progress, kind string, chains int) *bars {
	return &bars{p: p, kind: kind, n: chains, last: map[int]int{}}
}

func (b *bars) report(pr pipeline.Progress) {
	if b.p == nil || pr.Stage != "chains" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.chains == nil {
		b.train.Done()
		b.chains = b.p.Stage("chains "+b.kind, b.n*pr.Total)
	}
	b.chains.Add(pr.Done - b.last[pr.Chain])
	b.last[pr.Chain] = pr.Done
}

func (b *bars) done() {
	b.train.Done()
	b.chains.Done()
}

// Merge joins the results of the parts of one run split with
// Config.Shard into the whole run's result: each proposal
// type's chains are merged by trj.Merge (which refuses parts of different
// runs, overlapping or missing chains) and summarised again; the stages
// every part repeats (pilot, transports, bridge, scatter) and the stage
// times come from the part that ran chain 1.
func Merge(parts ...*Result) (*Result, error) {
	var base *Result
	for _, p := range parts {
		if p == nil || p.Result == nil || len(p.Order) == 0 {
			return nil, errors.New("sas: merge: a part has no result")
		}
		if r := p.Runs[p.Order[0]]; r != nil && r.Chains != nil && len(r.Chains.Chains) > 0 && r.Chains.Chains[0].Chain == 0 {
			base = p
		}
	}
	if base == nil {
		return nil, errors.New("sas: merge: no part holds chain 1")
	}
	labels := base.Models
	out := &Result{
		Result:  experiment.NewResult(base.Experiment, base.Seed, labels),
		Running: map[string][][]float64{}, Bridge: base.Bridge, Proposed: base.Proposed,
		Source: base.Source, Background: base.Background, Truth: base.Truth, Runs: map[string]*trj.Result{},
	}
	out.Result.Truth, out.Settings, out.Seconds = base.Result.Truth, base.Settings, base.Seconds
	for _, kind := range base.Order {
		var rs []*trj.Result
		for i, p := range parts {
			r := p.Runs[kind]
			if r == nil {
				return nil, fmt.Errorf("sas: merge: part %d has no %s run", i+1, kind)
			}
			rs = append(rs, r)
		}
		m, err := trj.Merge(rs...)
		if err != nil {
			return nil, fmt.Errorf("sas: merge %s: %w", kind, err)
		}
		p, running, err := summarize(m, labels)
		if err != nil {
			return nil, fmt.Errorf("sas: merge %s: %w", kind, err)
		}
		if bp := base.Proposals[kind]; bp != nil {
			p.Bridge, p.Seconds = bp.Bridge, bp.Seconds
		}
		out.Runs[kind], out.Running[kind] = m, running
		out.Add(kind, p)
	}
	return out, nil
}
