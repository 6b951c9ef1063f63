package trj

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"

	"github.com/trjgo/trj/internal/runs"
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
	// Independence.Proposal, the function fields of a family, pilot method
	// or within-model move of one's own), whose presence alone it hashes.
	// Every other setting is hashed by value. Give each distinct set of
	// functions (and of what they capture) its own Tag, such as
	// "start-at-mode v2". A shard (Chains.Shard) whose settings hold
	// functions needs a Tag.
	Tag string
}

// PilotSettings configures the pilot stage. The pilot's draws are split into
// independent halves: one trains the transports, the other evaluates the
// bridge estimator, in groups whose spread gives the bridge's standard error.
type PilotSettings struct {
	// Method makes the draws: NUTSPilots (when nil), SMCPilots,
	// GivenPilots or a method of one's own (PilotMethod); zero fields of
	// this package's methods take the defaults documented on them, and a
	// pointer to a method is its value.
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
	// proposal: NUTSMove (when nil), RandomWalkMove or a move of one's
	// own (WithinMove).
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

func (s *Settings) withDefaults(numModels int) Settings {
	var d Settings
	if s != nil {
		d = *s
	}
	d.Pilot.Method = withDefaults[PilotMethod](d.Pilot.Method, NUTSPilots{})
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
	c.Within = withDefaults[WithinMove](c.Within, NUTSMove{})
	return d
}

// validate checks the settings before any work: first the pilot method's
// (unless Pilot.From replaces it) and the within-model move's own checks
// (SpaceChecker), then the counts of the other stages.
func (s *Settings) validate(space *ppl.Space) error {
	// A nil pointer of this package's methods is their zero value
	// (withDefaults); one of one's own would panic when called.
	for i, v := range []any{s.Pilot.Method, s.Chains.Within} {
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
			return fmt.Errorf("trj: %s is a nil %T: give a value (nil itself means the default)", []string{"Pilot.Method", "Chains.Within"}[i], v)
		}
	}
	if s.Pilot.From == nil {
		if err := checkSetting(s.Pilot.Method, space); err != nil {
			return fmt.Errorf("trj: pilot method %q: %w", s.Pilot.Method.Name(), err)
		}
	}
	if err := checkSetting(s.Chains.Within, space); err != nil {
		return fmt.Errorf("trj: within-model move %q: %w", s.Chains.Within.Name(), err)
	}
	numModels := space.NumModels()
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
