package selection

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Proposal is a family of proposals for Run: the transports that
// carry the parameters across a jump between models, and the within-model
// proposals (Settings.Proposal). The families of this package are
// FullConditional (the default: one Laplace fit of the full model,
// conditioned for each model on its missing terms being 0), Laplace
// (a Laplace fit of each model on its first visit; the default when
// Informed), Global and Identity (baselines), Amortised
// (one conditional flow over the saturated space, trained on the draws of
// a short first pass) and CTRJ (the same flow trained on NUTS pilots
// of a few models). bench/README.md compares them. A family of one's own implements this interface in a file
// of its own.
type Proposal interface {
	// String names the family (Result.Proposal).
	String() string
	// Prepare readies the family for one run of Run, before its chains
	// start; what it learns is fixed for the whole run, so the chains stay
	// exact. ctx cancels it.
	Prepare(ctx context.Context, in *Preparation) (Proposer, error)
}

// Proposals returns the built-in families of Proposal, the
// default first: what ParseProposal looks names up in.
func Proposals() []Proposal {
	return []Proposal{FullConditional{}, Exact{}, ModelPosterior{}, Laplace{}, Global{}, Identity{}, Amortised{}, CTRJ{}}
}

// ParseProposal returns the built-in family whose String is name
// (with its default fields), for flags and configuration files.
func ParseProposal(name string) (Proposal, error) {
	var names []string
	for _, p := range Proposals() {
		if p.String() == name {
			return p, nil
		}
		names = append(names, p.String())
	}
	return nil, fmt.Errorf("selection: unknown selection proposal %q (want one of %s)", name, strings.Join(names, ", "))
}

// Proposer is a family prepared for one run.
type Proposer interface {
	// Laplace reports whether Run fits each model's Laplace
	// approximation on its first visit and passes it to Model (it also
	// gives the reported evidences and the Informed choice's weights).
	Laplace() bool
	// Model returns model tm's transports, given its compiled model m and
	// Laplace fit lap (nil unless Laplace): jump carries the model to the
	// reference for the jumps, within is the within-model proposal's (see
	// kernels.SelectionModel). Either may be a transport of the saturated
	// space (dimension always-in + P + shared, the terms' coordinates in
	// term order, an inactive term's an N(0, 1) auxiliary); then both must
	// be, for every model. Model is called once per model built, possibly
	// from several goroutines at once, and the transports it returns are
	// used by several chains at once: they must be safe for concurrent
	// use.
	Model(tm ppl.Terms, m *ppl.GraphModel, lap *flows.Laplace) (jump, within kernels.Transport, err error)
}

// Preparation is what a family may use to prepare itself.
type Preparation struct {
	// Space is the selection space (a clone: the family may build models
	// of it).
	Space *ppl.SelectionSpace
	// Base is the mode of the model without terms: its always-in, then
	// shared coordinates.
	Base []float64
	// Settings are the run's settings, defaults applied.
	Settings *Settings

	laplace func(ppl.Terms) (*ppl.GraphModel, *flows.Laplace, error)
}

// Laplace builds model tm and fits its Laplace approximation as Run
// does for the models it visits (mode by damped Newton from Base, Hessian
// by finite differences of the compiled gradient).
func (in *Preparation) Laplace(tm ppl.Terms) (*ppl.GraphModel, *flows.Laplace, error) {
	return in.laplace(tm)
}

// FullLaplace fits the Laplace approximation of the model with every term.
// When that model has prior probability zero (a g-prior's with more terms
// than the data support, or exactly collinear ones: its posterior need not
// be proper) or its fit fails, it fits the model's density with a small
// ridge on the terms' coordinates instead (ridgeFraction of each term's
// curvature at the model without terms), which exists whenever the
// density is proper up to directions of the terms: a Gaussian that is
// only a proposal, the chains' exactness coming from the target.
func (in *Preparation) FullLaplace() (*flows.Laplace, error) {
	all := make([]int, in.Space.P())
	for i := range all {
		all[i] = i
	}
	full, _ := ppl.NewTerms(in.Space.P(), all...)
	lp, err := in.Space.LogPrior(full)
	if err != nil {
		return nil, err
	}
	if !math.IsInf(lp, -1) {
		_, lap, err := in.laplace(full)
		if err == nil {
			return lap, nil
		}
	}
	return in.ridgeLaplace(full)
}

// ridgeFraction is the ridge of ridgeLaplace relative to each term's
// curvature.
const ridgeFraction = 0.01

// ridgeLaplace fits model full's density minus ½ Σ_j w_j θ_j² over the
// term coordinates j, w_j = ridgeFraction × the density's curvature in
// θ_j at Base (the terms at 0), so that the ridge is in the units of the
// model and needs no setting.
func (in *Preparation) ridgeLaplace(full ppl.Terms) (*flows.Laplace, error) {
	m, err := in.Space.Build(full)
	if err != nil {
		return nil, err
	}
	A, S, P, d := in.Space.Always(), in.Space.Shared(), in.Space.P(), m.Dim()
	x0 := make([]float64, d)
	copy(x0[:A], in.Base[:A])
	copy(x0[d-S:], in.Base[A:])
	g0, g1 := make([]float64, d), make([]float64, d)
	if _, err := m.LogDensityGrad(x0, g0); err != nil {
		return nil, err
	}
	w := make([]float64, P)
	const h = 1e-4
	for j := range P {
		x0[A+j] = h
		_, err := m.LogDensityGrad(x0, g1)
		x0[A+j] = 0
		if err != nil {
			return nil, err
		}
		w[j] = ridgeFraction * math.Abs(g0[A+j]-g1[A+j]) / h
		if !(w[j] > 0) || math.IsInf(w[j], 0) {
			w[j] = ridgeFraction
		}
	}
	f := func(x, grad []float64) (float64, error) {
		lp, err := m.LogDensityGrad(x, grad)
		for j := range P {
			v := x[A+j]
			lp -= 0.5 * w[j] * v * v
			grad[A+j] -= w[j] * v
		}
		return lp, err
	}
	lap, err := flows.FitLaplace(f, x0, nil)
	if err != nil {
		return nil, fmt.Errorf("selection: the ridge-regularised fit of the model with every term: %w", err)
	}
	return lap, nil
}

// Seed returns the seed of part i of the named stage of the preparation,
// derived from the run's seed: the same for the same run, distinct for
// distinct (stage, i).
func (in *Preparation) Seed(stage string, i int) uint64 {
	return runs.SubSeed(in.Settings.Seed, "select/"+stage, i)
}
