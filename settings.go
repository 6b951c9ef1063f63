package trj

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
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
	// running-estimate figure. It is checked before any computation, and
	// refused when it holds chain files (draws_N.csv) of another run (each
	// carries its run's fingerprint): a folder never mixes two runs' files.
	OutputDir string
	// Progress, when non-nil, is called as stages advance. Calls may come
	// from several goroutines at once.
	Progress func(pipeline.Progress)
	// Tag names, for the run's fingerprint (Result.Fingerprint, which
	// Merge compares), what the fingerprint cannot read: the functions in
	// the settings (Chains.Start, SMCPilots.Tempered, UserTransports.New,
	// Independence.Proposal, a family of one's own's function fields),
	// whose presence alone it hashes. Every other setting is hashed by
	// value. Give each distinct set of functions (and of what they
	// capture) its own Tag, such as "start-at-mode v2". A shard
	// (Chains.Shard) whose settings hold functions needs a Tag.
	Tag string
}

// PilotMethod makes each model's pilot draws: NUTSPilots (the default),
// SMCPilots or GivenPilots, each a value holding its own settings. Draws
// made any other way come in through GivenPilots.
type PilotMethod interface {
	// Name names the method in results ("NUTS", "SMC" or "given").
	Name() string
	withDefaults() PilotMethod
	validate(numModels int) error
	pilot(ctx context.Context, s *Settings, m ppl.Model, k int, progress func(done, total int)) (*Pilot, error)
}

// NUTSPilots draws each model's pilot with NUTS chains and Stan's warm-up.
type NUTSPilots struct {
	// Chains is the number of chains per model (8); the first half
	// train the transports, the second half evaluate them. A NUTS chain
	// rarely leaves the mode it warms up in, so the chains are what spreads
	// the pilot over a multimodal posterior's modes: on the factor-analysis
	// space (sign modes of the loadings), π(2 factors) over three seeds
	// spread by 0.002 (standard deviation) with 8 chains of 500 draws and
	// by 0.013 with 4 chains of 1000, the reported standard error about
	// 0.009 in both (bench/README.md, "Factor analysis: trj.Run defaults").
	Chains int
	// Warmup and Draws are the warm-up and kept iterations per chain
	// (1000 and 500).
	Warmup, Draws int
}

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

// GivenPilots takes each model's pilot from draws made elsewhere.
type GivenPilots struct {
	// Draws gives each model's unconstrained draws: Draws[k][g] is group g
	// of model k's draws (groups are independent, such as separate
	// chains); the first half of the groups train, the second half
	// evaluate. Every model needs an even number of groups, at least 2.
	Draws [][][][]float64
}

// Name returns "NUTS".
func (NUTSPilots) Name() string { return "NUTS" }

// Name returns "SMC".
func (SMCPilots) Name() string { return "SMC" }

// Name returns "given".
func (GivenPilots) Name() string { return "given" }

func (p NUTSPilots) withDefaults() PilotMethod {
	runs.OrDefault(&p.Chains, 8)
	runs.OrDefault(&p.Warmup, 1000)
	runs.OrDefault(&p.Draws, 500)
	return p
}

func (p SMCPilots) withDefaults() PilotMethod {
	runs.OrDefault(&p.Runs, 40)
	runs.OrDefault(&p.Refresh, 10)
	return p
}

func (p GivenPilots) withDefaults() PilotMethod { return p }

func (p NUTSPilots) validate(int) error {
	switch {
	case p.Chains < 2 || p.Chains%2 != 0:
		return fmt.Errorf("trj: %d pilot chains (NUTSPilots.Chains): need an even number ≥ 2 (half train, half evaluate)", p.Chains)
	case p.Draws < 2 || p.Warmup < 0:
		return fmt.Errorf("trj: pilot of %d warm-up and %d draws per chain (NUTSPilots.Warmup, Draws): need warm-up ≥ 0 and at least 2 draws", p.Warmup, p.Draws)
	}
	return nil
}

func (p SMCPilots) validate(int) error {
	if p.Runs < 4 || p.Runs%2 != 0 {
		return fmt.Errorf("trj: %d SMC runs (SMCPilots.Runs): need an even number ≥ 4 (half train, half evaluate)", p.Runs)
	}
	return nil
}

func (p GivenPilots) validate(numModels int) error {
	if len(p.Draws) != numModels {
		return fmt.Errorf("trj: pilot draws given for %d models (GivenPilots.Draws), the space has %d", len(p.Draws), numModels)
	}
	return nil
}

// PilotSettings configures the pilot stage. The pilot's draws are split into
// independent halves: one trains the transports, the other evaluates the
// bridge estimator, in groups whose spread gives the bridge's standard error.
type PilotSettings struct {
	// Method makes the draws: NUTSPilots (when nil), SMCPilots or
	// GivenPilots; zero fields take the defaults documented on them.
	Method PilotMethod
	// From, when non-nil, reuses the pilots of an earlier run on the same
	// space (what RunFitted returned): draws, NUTS adaptation and SMC
	// evidence. Method is then ignored.
	From *Fitted
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
	// proposal: NUTSMove (when nil) or RandomWalkMove.
	Within WithinMove
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

// pilotMethodOf returns m as a value: NUTSPilots for nil (and a nil
// pointer), the pointed-to value for a pointer to a method.
func pilotMethodOf(m PilotMethod) PilotMethod {
	switch v := m.(type) {
	case nil:
		return NUTSPilots{}
	case *NUTSPilots:
		if v == nil {
			return NUTSPilots{}
		}
		return *v
	case *SMCPilots:
		if v == nil {
			return SMCPilots{}
		}
		return *v
	case *GivenPilots:
		if v == nil {
			return GivenPilots{}
		}
		return *v
	}
	return m
}

func (s *Settings) withDefaults(numModels int) Settings {
	var d Settings
	if s != nil {
		d = *s
	}
	d.Pilot.Method = pilotMethodOf(d.Pilot.Method).withDefaults()
	if d.Proposals == nil {
		d.Proposals = &AutoTransports{}
	}
	c := &d.Chains
	runs.OrDefault(&c.Chains, 8)
	runs.OrDefault(&c.Steps, 5000)
	runs.OrDefault(&c.Warmup, c.Steps/10)
	runs.OrDefault(&c.MaxSteps, 10*min(c.Steps, math.MaxInt/10))
	c.MaxSteps = max(c.MaxSteps, c.Steps)
	c.Warmup = max(c.Warmup, 0)
	runs.OrDefault(&c.JumpFloor, 0.1/float64(max(numModels, 1)))
	runs.OrDefault(&c.FlowMoves, 1)
	c.FlowMoves = max(c.FlowMoves, 0)
	c.Within = withinMoveOf(c.Within).withDefaults()
	return d
}

func (s *Settings) validate(numModels int) error {
	if err := s.Pilot.Method.validate(numModels); err != nil {
		return err
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
