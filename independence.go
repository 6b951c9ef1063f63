package trj

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// IndependenceFunc fits model k's independence proposal q_k(θ_k) to its
// unconstrained training draws (TransportSettings.Independence).
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

// validateIndependence checks the settings of independence proposals.
func (s *Settings) validateIndependence() error {
	t := s.Transport
	if t.Kind != TransportIndependence {
		if t.Independence != nil {
			return fmt.Errorf("trj: Transport.Independence is set but Transport.Kind is %v: set Kind to TransportIndependence", t.Kind)
		}
		return nil
	}
	switch {
	case s.Chains.Algorithm != TRJ:
		return errors.New("trj: independence proposals run with the TRJ algorithm (Chains.Algorithm), not CTRJ")
	case s.Chains.Permutations != nil:
		return errors.New("trj: Chains.Permutations map transports' reference coordinates: independence proposals have none")
	case t.Load != nil:
		return errors.New("trj: independence proposals are fitted to the pilot, not loaded: unset Transport.Load")
	}
	return nil
}

// independenceSet is one fitted independence proposal per model, and how to
// give every goroutine its own.
type independenceSet struct {
	fit   IndependenceFunc
	props []kernels.IndependenceProposal
	train [][][]float64
}

// fitIndependence fits every model's independence proposal, in parallel,
// and reports its quality on the evaluation draws.
func fitIndependence(ctx context.Context, s *Settings, space *ppl.Space, pilots []*pilot, reports []TransportReport) (*independenceSet, error) {
	fit := s.Transport.Independence
	if fit == nil {
		fit = NormalIndependence
	}
	K := space.NumModels()
	set := &independenceSet{fit: fit, props: make([]kernels.IndependenceProposal, K), train: make([][][]float64, K)}
	err := parallel.For(ctx, K, func(ctx context.Context, k int) error {
		set.train[k] = pilots[k].Train
		q, err := fit(k, pilots[k].Train)
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
		qual, err := assessIndependence(q, pilots[k].EvalDraws(), m.Clone().LogDensity, subSeed(s.Seed, "assess", k))
		if err != nil {
			return fmt.Errorf("trj: independence proposal of model %q: %w", space.ModelLabel(k), err)
		}
		set.props[k] = q
		reports[k] = TransportReport{Kind: "independence", Quality: qual}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return set, nil
}

// proposals returns a copy of every proposal for one goroutine: its Clone
// when it has one, else a new fit to the same training draws.
func (set *independenceSet) proposals() ([]kernels.IndependenceProposal, error) {
	out := make([]kernels.IndependenceProposal, len(set.props))
	for k, q := range set.props {
		if c, ok := reflectClone(q).(kernels.IndependenceProposal); ok {
			out[k] = c
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
