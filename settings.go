package trj

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trjgo/trj/kernels"
)

// Settings configures Run. A nil *Settings, and zero fields, take the
// defaults; every default is documented on its field.
type Settings struct {
	// Seed determines every random stream of the run; the same seed gives
	// the same numbers at any GOMAXPROCS.
	Seed uint64
	// Pilot configures the pilot draws of each model.
	Pilot PilotSettings
	// Proposals is the family of between-model proposals: fitted to the
	// pilots, it makes the bridge estimate's proposals and the chains'
	// jumps (AutoTransports when nil).
	Proposals Proposals
	// Bridge configures the bridge estimate.
	Bridge BridgeSettings
	// Chains configures the transdimensional chains.
	Chains ChainSettings
	// OutputDir, when set, receives the draws as CmdStan CSV files (one per
	// chain, written as they are made), the JSON summary and the
	// running-estimate figure. It is checked before any computation.
	OutputDir string
	// Progress, when non-nil, is called as stages advance. Calls may come
	// from several goroutines at once.
	Progress func(Progress)
	// Tag names, for the run's fingerprint (Result.Fingerprint, which
	// Merge compares), what the fingerprint cannot read: the functions in
	// the settings (Chains.Start, Pilot.Tempered, UserTransports.New,
	// Independence.Proposal, a family of one's own's function fields),
	// whose presence alone it hashes. Every other setting is hashed by
	// value. Give each distinct set of functions (and of what they
	// capture) its own Tag, such as "start-at-mode v2". A shard
	// (Chains.Shard) whose settings hold functions needs a Tag.
	Tag string
}

// Progress reports how far a stage has come: Done of Total units (draws,
// iterations or steps) of one model's or one chain's part of the stage.
type Progress struct {
	// Stage is "pilot", "transport", "bridge" or "chains".
	Stage string
	// Model is the model concerned (−1 when the unit is a chain).
	Model int
	// Chain is the chain concerned (−1 when the unit is a model).
	Chain       int
	Done, Total int
}

// PilotMethod selects how each model's pilot draws are made.
type PilotMethod int

const (
	// PilotNUTS runs NUTS chains with Stan's warm-up (the default).
	PilotNUTS PilotMethod = iota
	// PilotSMC runs independent adaptive-tempering SMC runs, which also
	// estimate each model's evidence; suited to multimodal posteriors.
	PilotSMC
	// PilotGiven uses the draws in PilotSettings.Draws.
	PilotGiven
)

// String names the method.
func (m PilotMethod) String() string {
	switch m {
	case PilotNUTS:
		return "NUTS"
	case PilotSMC:
		return "SMC"
	case PilotGiven:
		return "given"
	}
	return fmt.Sprintf("PilotMethod(%d)", int(m))
}

// PilotSettings configures the pilot stage. The pilot's draws are split into
// independent halves: one trains the transports, the other evaluates the
// bridge estimator, in groups whose spread gives the bridge's standard error.
type PilotSettings struct {
	// Method is PilotNUTS (default), PilotSMC or PilotGiven.
	Method PilotMethod
	// Chains is the number of NUTS chains per model (8); the first half
	// train the transports, the second half evaluate them. A NUTS chain
	// rarely leaves the mode it warms up in, so the chains are what spreads
	// the pilot over a multimodal posterior's modes: on the factor-analysis
	// space (sign modes of the loadings), π(2 factors) over three seeds
	// spread by 0.002 (standard deviation) with 8 chains of 500 draws and
	// by 0.013 with 4 chains of 1000, the reported standard error about
	// 0.009 in both (bench/README.md, "Factor analysis: trj.Run defaults").
	Chains int
	// Warmup and Draws are NUTS's warm-up and kept iterations per chain
	// (1000 and 500).
	Warmup, Draws int
	// Runs is the number of independent SMC runs per model (40), half for
	// training and half for evaluation, each evaluation run one group of
	// the bridge's jackknife (so that its standard error rests on 20
	// groups: with few groups it is itself too noisy to trust); SMC sets
	// the particles of each run (200 when SMC.Particles is zero).
	Runs int
	SMC  *kernels.SMCSettings
	// Refresh is the number of NUTS transitions (at the posterior, with a
	// kernel adapted from the particles) applied to every SMC particle
	// before use (10; negative: none). A finite particle system's draws
	// are biased by the same amount in every run, which the spread across
	// runs cannot reveal; these moves shrink that bias.
	Refresh int
	// Tempered, when non-nil, gives model k's tempered form for SMC; by
	// default a model that is a Temperer (ppl models) provides it.
	Tempered func(k int) (kernels.TemperedModel, error)
	// From, when non-nil, reuses the pilots of an earlier run on the same
	// space (what RunFitted returned): draws, NUTS adaptation and SMC
	// evidence. Method and the other pilot fields are then ignored.
	From *Fitted
	// Draws gives, for PilotGiven, each model's unconstrained draws:
	// Given[k][g] is group g of model k's draws (groups are independent,
	// such as separate chains); the first half of the groups train, the
	// second half evaluate. Every model needs the same even number of
	// groups, at least 2.
	Given [][][][]float64
}

// BridgeSettings configures the bridge estimate.
type BridgeSettings struct {
	// Groups is the number of groups the evaluation draws are cut into
	// (20 for NUTS pilots; the number of evaluation runs or groups
	// otherwise). The standard errors are the delete-one-group jackknife's.
	Groups int
	// Proposals is the number of proposals made from every evaluation
	// draw. By default it is the least number that gives every ordered pair
	// of models enough proposals (see bridgeProposals): 1 unless there are
	// many models for the evaluation draws, such as more than about 100
	// models with NUTS pilots' 2000 (with 256 models and 200 draws per
	// model in 20 groups, 29), since each pair needs proposals both ways in every
	// jackknife subset. More average out the proposals' noise but not the draws':
	// with the independent-auxiliary proposal on robust variable selection
	// (2–5 % of jumps accepted) up to 8 rounds left the estimate's error
	// dominated by the few evaluation draws whose proposals are ever
	// accepted, and the jackknife standard error then under-covered more
	// (z-score sd 2.2 against 1.4 with one proposal, 9–8 seeds).
	Proposals int
}

// ChainSettings configures the transdimensional chains.
type ChainSettings struct {
	// Chains is the number of chains (8), run in parallel: with fewer, the
	// indicators' ESS, and so the MCSE, can miss slow switching between
	// the modes of a multimodal model (measured on robust variable
	// selection: z-score sd 1.57 with 4 chains, 1.10 with 8).
	Chains int
	// Shard, when non-nil, runs only some of the chains (for a run split
	// over several processes); chain c is seeded as in the full run.
	Shard []int
	// Steps is the number of kept steps per chain (5000) and Warmup the
	// steps discarded before them (Steps/10; negative: none). Each step is a
	// jump proposal followed by a move within the current model (Within).
	Steps, Warmup int
	// MaxSteps bounds the kept steps per chain (10·Steps; less than Steps:
	// Steps). When after Steps kept steps some model's indicator has a
	// rank-normalised R̂ above 1.01 or a bulk ESS below 100 per chain
	// (the thresholds of Vehtari et al. 2021), every chain runs on for
	// Steps more, until they pass or MaxSteps is reached; Result.Chain
	// tells which models still had not mixed. Poorly mixing proposals
	// (a few jumps in a hundred accepted) need this: with 5000 steps their
	// MCSEs under-covered. A shard (Shard) never extends, since the
	// decision needs every chain.
	MaxSteps int
	// JumpFloor is the least probability of proposing any model:
	// j_k(k') = max(π̂(k'), JumpFloor) renormalised, π̂ the bridge estimate
	// (0.1/K).
	JumpFloor float64
	// Jump, when non-nil, fixes the jump probabilities: j_k(k') = Jump[k']
	// from every model k (one positive entry per model, summing to 1; the
	// current model may be proposed too). The paper's SAS chains use the
	// model probabilities, with which exact transports accept every jump.
	// By default j follows the bridge estimate (JumpFloor).
	Jump []float64
	// Within is the move within the current model after each jump
	// proposal: WithinNUTS (default) or WithinRandomWalk, whose proposal
	// covariance is RWScale/n_k times the covariance of model k's training
	// draws (RWScale 2.38² by default).
	Within  WithinKind
	RWScale float64
	// FlowMoves is the number of independence Metropolis–Hastings moves
	// made after each within-model move (1; negative: none), each
	// proposing θ' = T_k⁻¹(z), z ~ N(0, I), from the model's own
	// transport (per-model transports), from the conditional transport
	// with fresh auxiliaries (Conditional; none with IndependentAux), or
	// from q_k (Independence): each family makes its own (see
	// FittedProposals.Kernel). They move a chain between the modes of
	// a multimodal posterior, which NUTS cannot: without them a chain
	// changed mode only by leaving the model and coming back, and on the
	// multimodal robust variable-selection example the indicators kept a
	// component too slow for their autocorrelations to show, so the
	// chains' MCSEs under-covered (z-score sd 1.9 with RQMA flows). CTRJ's
	// moves draw z from ½N(0, I) + ½N(0, 2²I) instead: a conditional flow
	// that under-covers part of a posterior trapped chains there for long
	// sojourns, and with N(0, I) alone their MCSEs under-covered (z sd
	// 1.42 over 10 seeds against 0.97 with the wider reference).
	FlowMoves int
	// Start, when non-nil, gives chain c's initial model and unconstrained
	// θ; by default the model is drawn from the bridge estimate and θ from
	// its evaluation draws. Run also calls it once for every chain
	// before the pilots, with a stream of its own, to refuse a start
	// outside the space (a model out of range, θ of the wrong length or
	// where the log density is not finite) before any work.
	Start func(chain int, rng *rand.Rand) (k int, theta []float64, err error)
}

func (s *Settings) withDefaults(numModels int) Settings {
	var d Settings
	if s != nil {
		d = *s
	}
	p := &d.Pilot
	orDefault(&p.Chains, 8)
	orDefault(&p.Warmup, 1000)
	orDefault(&p.Draws, 500)
	orDefault(&p.Runs, 40)
	orDefault(&p.Refresh, 10)
	if d.Proposals == nil {
		d.Proposals = &AutoTransports{}
	}
	c := &d.Chains
	orDefault(&c.Chains, 8)
	orDefault(&c.Steps, 5000)
	orDefault(&c.Warmup, c.Steps/10)
	orDefault(&c.MaxSteps, 10*min(c.Steps, math.MaxInt/10))
	c.MaxSteps = max(c.MaxSteps, c.Steps)
	c.Warmup = max(c.Warmup, 0)
	orDefault(&c.JumpFloor, 0.1/float64(max(numModels, 1)))
	orDefault(&c.FlowMoves, 1)
	c.FlowMoves = max(c.FlowMoves, 0)
	orDefault(&c.RWScale, defaultRWScale)
	return d
}

// orDefault sets *v to def when it is zero (unset).
func orDefault[T int | float64](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

func (s *Settings) validate(numModels int) error {
	p := s.Pilot
	switch {
	case p.Method < PilotNUTS || p.Method > PilotGiven:
		return fmt.Errorf("trj: unknown pilot method %d (Pilot.Method)", int(p.Method))
	case p.Method == PilotNUTS && (p.Chains < 2 || p.Chains%2 != 0):
		return fmt.Errorf("trj: %d pilot chains (Pilot.Chains): need an even number ≥ 2 (half train, half evaluate)", p.Chains)
	case p.Method == PilotNUTS && (p.Draws < 2 || p.Warmup < 0):
		return fmt.Errorf("trj: pilot of %d warm-up and %d draws per chain (Pilot.Warmup, Pilot.Draws): need warm-up ≥ 0 and at least 2 draws", p.Warmup, p.Draws)
	case p.Method == PilotSMC && (p.Runs < 4 || p.Runs%2 != 0):
		return fmt.Errorf("trj: %d SMC runs (Pilot.Runs): need an even number ≥ 4 (half train, half evaluate)", p.Runs)
	case p.Method != PilotGiven && p.Given != nil && p.From == nil:
		return fmt.Errorf("trj: pilot draws given (Pilot.Given) but Pilot.Method is %v: set it to PilotGiven to use them", p.Method)
	case p.Method == PilotGiven && len(p.Given) != numModels:
		return fmt.Errorf("trj: pilot draws given for %d models (Pilot.Given), the space has %d", len(p.Given), numModels)
	}
	c := s.Chains
	switch {
	case c.Chains < 1:
		return fmt.Errorf("trj: %d chains (Chains.Chains): need at least 1", c.Chains)
	case c.Steps < 4:
		return fmt.Errorf("trj: %d steps per chain (Chains.Steps): need at least 4", c.Steps)
	case !(c.JumpFloor > 0 && c.JumpFloor*float64(numModels) <= 1):
		return fmt.Errorf("trj: jump floor %v (Chains.JumpFloor): need 0 < floor ≤ 1/K = %v", c.JumpFloor, 1/float64(numModels))
	case s.Bridge.Proposals < 0 || s.Bridge.Proposals > maxBridgeProposals:
		return fmt.Errorf("trj: %d bridge proposals per evaluation draw (Bridge.Proposals): need 1 to %d (0: the default)", s.Bridge.Proposals, maxBridgeProposals)
	case s.Bridge.Groups < 0 || s.Bridge.Groups == 1:
		return fmt.Errorf("trj: %d bridge groups (Bridge.Groups): need at least 2", s.Bridge.Groups)
	}
	return c.validateWithin(numModels)
}
