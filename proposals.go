package trj

import (
	"context"
	"errors"
	"io"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Proposals is a family of between-model proposals: what Run fits to the
// pilots' training draws after the pilot stage, and whose kernels then make
// the bridge estimate's proposals and the chains' jumps (Settings.Proposals).
//
// The families of this package are AutoTransports (the default),
// AffineTransports, RQMATransports, UserTransports and LoadedTransports
// (per-model transports: TRJ, Algorithm 1 of the paper), Conditional (one
// conditional flow: CTRJ, Algorithm 2), IndependentAux (CTRJ with the
// identity transport) and Independence (classic RJMCMC). A family of one's
// own implements this interface; docs/architecture.md shows one.
type Proposals interface {
	// Name names the family (Result.Transport).
	Name() string
	// Fit fits the family to the pilots' training draws and reports, per
	// model, how well it fits their evaluation draws. It may use several
	// goroutines; ctx cancels it.
	Fit(ctx context.Context, data *FitData) (FittedProposals, error)
}

// FittedProposals is a fitted family of proposals.
type FittedProposals interface {
	// Algorithm names the transdimensional kernel ("TRJ", "CTRJ";
	// Result.Algorithm).
	Algorithm() string
	// Reports says, per model, which proposal it got and how well it fits
	// (Result.Transports).
	Reports() []TransportReport
	// Kernel returns a new RJ kernel with jump matrix jump whose every step
	// is a jump proposal followed by within (nil: none) and then flowMoves
	// of the family's own independence moves within the model (see
	// ChainSettings.FlowMoves; families without such moves ignore it). It
	// is called once for every goroutine that needs a kernel (the bridge's
	// groups, the chains), possibly at once from several: the kernel must
	// have its own clones of the space and of everything with scratch
	// space.
	Kernel(jump [][]float64, within kernels.WithinModelKernel, flowMoves int) (kernels.RJKernel, error)
	// Save writes the fitted transports as one set that LoadedTransports
	// reads back, or fails for a family without savable transports.
	Save(w io.Writer) error
}

// ModelTransports is implemented by fitted proposals that carry each
// model's posterior to the reference by a transport of its own (TRJ's
// per-model families). Run then estimates every model's evidence from its
// transport (Result.ModelEvidence); families without it get none.
type ModelTransports interface {
	// ModelTransport returns a copy of model k's transport for one
	// goroutine.
	ModelTransport(k int) (kernels.Transport, error)
}

// Reloader is implemented by families whose fitted proposals a staged
// run stores once (FittedProposals.Save, in the fit stage) and reads back
// in every chains stage instead of fitting them again. Reload returns the
// family that reads such a saved set, with the family's own additions
// (TRJ's permutations, CTRJ's auxiliary density).
type Reloader interface {
	Reload(set io.Reader) Proposals
}

// SpaceChecker is implemented by families, pilot methods and within-model
// moves whose settings can be checked before any work, against the space
// where they depend on it (TRJ's permutations, a loaded set's models, the
// memory NUTS pilots need): Run calls CheckSpace before the first pilot, so
// such a run fails at once, not after them. A pilot method is checked only
// when it is used (PilotSettings.From nil).
type SpaceChecker interface {
	CheckSpace(space *ppl.Space) error
}

// FitData is what a family is fitted to: the space and every model's pilot.
type FitData struct {
	Space *ppl.Space
	// Pilots[k] is model k's pilot: Train trains, Eval evaluates.
	Pilots []*Pilot
	seed   uint64
}

// Seed returns the seed of part i of the named stage of the fit, derived
// from the run's seed (Settings.Seed): the same for the same run, distinct
// for distinct (stage, i).
func (d *FitData) Seed(stage string, i int) uint64 { return runs.SubSeed(d.seed, stage, i) }

// Fitted is what a run fitted that a later run can reuse: every model's
// pilot (Settings.Pilot.From) and the fitted proposals (saved by Save and
// read back by LoadedTransports). RunFitted returns it.
type Fitted struct {
	// Labels and Dims are the models' labels and dimensions.
	Labels []string
	Dims   []int
	// Pilot names the pilot method.
	Pilot string
	// Pilots are the pilot draws of every model.
	Pilots []*Pilot
	// Proposals are the fitted proposals; nil when the run stopped before
	// fitting them.
	Proposals FittedProposals
}

// Save writes the fitted transports as one set that LoadedTransports reads
// back (and checks against the space).
func (f *Fitted) Save(w io.Writer) error {
	if f == nil || f.Proposals == nil {
		return errors.New("trj: the run fitted no proposals to save")
	}
	return f.Proposals.Save(w)
}

// Transport returns the transport fitted to (or loaded for) model k by a
// per-model family, else nil. It is the run's own copy: clone it before
// using it beside the run.
func (f *Fitted) Transport(k int) kernels.Transport {
	if f == nil {
		return nil
	}
	if t, ok := f.Proposals.(interface{ Transport(int) kernels.Transport }); ok && k >= 0 && k < len(f.Labels) {
		return t.Transport(k)
	}
	return nil
}

// Conditional returns the conditional flow of the Conditional family (or of
// a loaded conditional set), else nil.
func (f *Fitted) Conditional() *flows.ConditionalRQMA {
	if f == nil {
		return nil
	}
	if c, ok := f.Proposals.(interface{ Flow() *flows.ConditionalRQMA }); ok {
		return c.Flow()
	}
	return nil
}

// TransportReport says which transport a model got and how well it fits.
type TransportReport struct {
	// Kind is "affine", "RQMA", "conditional RQMA", "identity", "user",
	// "loaded" or "independence" (or a family of one's own's).
	Kind string `json:"kind"`
	// Quality is the chosen transport's held-out log-likelihood and
	// importance ESS on the model's evaluation draws (zero for user
	// transports without a density and for families that fit nothing).
	Quality flows.Quality `json:"quality"`
	// Tried lists the other transports fitted and their quality, for
	// AutoTransports.
	Tried map[string]flows.Quality `json:"tried,omitempty"`
}
