package trj

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// IndependenceFunc fits model k's independence proposal q_k(θ_k) to its
// unconstrained training draws (Independence.Proposal).
type IndependenceFunc func(k int, train [][]float64) (kernels.IndependenceProposal, error)

// NormalIndependence is the default independence proposal: the normal
// distribution N(μ, Σ) with the mean and covariance of the training draws,
// on the unconstrained scale. It suits near-Gaussian posteriors; heavier
// tails than the posterior's are safer for an independence proposal, so for
// skewed or heavy-tailed posteriors give a proposal of your own.
func NormalIndependence(_ int, train [][]float64) (kernels.IndependenceProposal, error) {
	a, err := flows.FitAffine(train, nil)
	if err != nil {
		return nil, err
	}
	return &normalProposal{a: a, z: make([]float64, a.Dim())}, nil
}

// normalProposal samples θ = μ + Lz, z ~ N(0, I), through an affine
// transport. It keeps scratch space: Clone gives another goroutine its own.
type normalProposal struct {
	a *flows.Affine
	z []float64
}

func (q *normalProposal) Dim() int { return q.a.Dim() }

func (q *normalProposal) LogDensity(theta []float64) (float64, error) {
	return q.a.LogDensity(theta)
}

func (q *normalProposal) Sample(rng *rand.Rand, theta []float64) error {
	if len(theta) != len(q.z) {
		return fmt.Errorf("trj: proposal of length %d, want %d", len(theta), len(q.z))
	}
	for i := range q.z {
		q.z[i] = rng.NormFloat64()
	}
	_, err := q.a.Inverse(q.z, theta)
	return err
}

// Clone returns a proposal with its own scratch space.
func (q *normalProposal) Clone() kernels.IndependenceProposal {
	return &normalProposal{a: q.a.Clone(), z: make([]float64, len(q.z))}
}

// Independence is classic reversible jump (e.g. Lopes and West 2004): a
// jump to model k' proposes θ' ~ q_{k'} independently of the current state,
// q_k fitted to model k's training draws by Fit (kernels.IndependenceRJ).
type Independence struct {
	// Proposal fits model k's proposal (NormalIndependence when nil). It is
	// called once per model, and again for every goroutine that needs its
	// own copy (the bridge's groups, the chains) unless the proposal has a
	// Clone method returning a kernels.IndependenceProposal; so it must
	// give the same proposal for the same draws, and it may be called from
	// several goroutines at once (it must not change the draws).
	Proposal IndependenceFunc
}

// Name implements Proposals.
func (ind *Independence) Name() string { return "independence" }

// Fit implements Proposals: it fits every model's proposal, in parallel,
// and reports its quality on the evaluation draws.
func (ind *Independence) Fit(ctx context.Context, d *FitData) (FittedProposals, error) {
	fit := ind.Proposal
	if fit == nil {
		fit = NormalIndependence
	}
	space := d.Space
	K := space.NumModels()
	set := &independenceSet{space: space, fit: fit, props: make([]kernels.IndependenceProposal, K), train: make([][][]float64, K), reports: make([]TransportReport, K)}
	err := parallel.For(ctx, K, func(ctx context.Context, k int) error {
		set.train[k] = d.Pilots[k].Train
		q, err := fit(k, d.Pilots[k].Train)
		if err != nil {
			return fmt.Errorf("trj: independence proposal of model %q: %w", space.ModelLabel(k), err)
		}
		if q == nil {
			return fmt.Errorf("trj: independence proposal of model %q is nil", space.ModelLabel(k))
		}
		if q.Dim() != space.ModelDim(k) {
			return fmt.Errorf("trj: independence proposal of model %q has dimension %d, the model has %d", space.ModelLabel(k), q.Dim(), space.ModelDim(k))
		}
		m, err := space.Model(k)
		if err != nil {
			return err
		}
		qual, err := assessIndependence(q, d.Pilots[k].EvalDraws(), m.Clone().LogDensity, d.Seed("assess", k))
		if err != nil {
			return fmt.Errorf("trj: independence proposal of model %q: %w", space.ModelLabel(k), err)
		}
		set.props[k] = q
		set.reports[k] = TransportReport{Kind: "independence", Quality: qual}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return set, nil
}

// independenceSet is one fitted independence proposal per model, and how to
// give every goroutine its own.
type independenceSet struct {
	space   *ppl.Space
	fit     IndependenceFunc
	props   []kernels.IndependenceProposal
	train   [][][]float64
	reports []TransportReport
}

func (set *independenceSet) Algorithm() string          { return "TRJ" }
func (set *independenceSet) Reports() []TransportReport { return set.reports }

// Save implements FittedProposals: independence proposals are not saved.
func (set *independenceSet) Save(io.Writer) error {
	return errors.New("trj: independence proposals are fitted to the pilot, not saved")
}

// Kernel implements FittedProposals: kernels.IndependenceRJ, with flowMoves
// independence moves from q_k.
func (set *independenceSet) Kernel(jump [][]float64, within kernels.WithinModelKernel, flowMoves int) (kernels.RJKernel, error) {
	space := set.space.Clone()
	props, err := set.proposals()
	if err != nil {
		return nil, err
	}
	if flowMoves > 0 {
		within = kernels.NewProposalMoves(within, space, props, flowMoves)
	}
	return kernels.NewIndependenceRJ(kernels.IndependenceRJConfig{Target: space, Proposals: props, Jump: jump, Within: within, Alternate: true})
}

// proposals returns a copy of every proposal for one goroutine: its Clone
// when it has one, else a new fit to the same training draws.
func (set *independenceSet) proposals() ([]kernels.IndependenceProposal, error) {
	out := make([]kernels.IndependenceProposal, len(set.props))
	for k, q := range set.props {
		if c, ok := q.(interface {
			Clone() kernels.IndependenceProposal
		}); ok {
			out[k] = c.Clone()
			continue
		}
		c, err := set.fit(k, set.train[k])
		if err != nil {
			return nil, fmt.Errorf("trj: independence proposal %d: %w", k, err)
		}
		out[k] = c
	}
	return out, nil
}

// assessIndependence is flows.Assess for an independence proposal: the
// mean log q over the held-out draws and the importance ESS of assessDraws
// draws from q weighted by target/q (a draw q cannot make weighs 0).
func assessIndependence(q kernels.IndependenceProposal, heldOut [][]float64, logTarget func([]float64) (float64, error), seed uint64) (flows.Quality, error) {
	var out flows.Quality
	var s, ss float64
	for i, x := range heldOut {
		l, err := q.LogDensity(x)
		if err != nil {
			return out, fmt.Errorf("evaluation draw %d: %w", i, err)
		}
		s += l
		ss += l * l
	}
	if n := float64(len(heldOut)); n > 1 {
		out.HeldOutLogLik = s / n
		out.HeldOutSE = math.Sqrt(math.Max(ss/n-out.HeldOutLogLik*out.HeldOutLogLik, 0) / (n - 1))
	}
	rng := rand.New(rand.NewPCG(seed, 0x155))
	th := make([]float64, q.Dim())
	lw := make([]float64, assessDraws)
	for i := range lw {
		lw[i] = math.Inf(-1)
		if err := q.Sample(rng, th); err != nil {
			continue
		}
		lq, err1 := q.LogDensity(th)
		lt, err2 := logTarget(th)
		if err1 == nil && err2 == nil && !math.IsNaN(lt-lq) && !math.IsInf(lq, 0) {
			lw[i] = lt - lq
		}
	}
	out.Draws = assessDraws
	lse := floats.LogSumExp(lw)
	if math.IsInf(lse, -1) || math.IsNaN(lse) {
		return out, nil
	}
	lw2 := make([]float64, len(lw))
	for i, v := range lw {
		lw2[i] = 2 * v
	}
	out.ESS = math.Exp(2*lse - floats.LogSumExp(lw2))
	out.ESSFraction = out.ESS / assessDraws
	return out, nil
}
