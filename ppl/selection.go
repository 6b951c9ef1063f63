package ppl

import (
	"container/list"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"
)

// Terms is a set of candidate terms {0, …, P−1} of a variable selection, a
// bitset (one bit per term, so P may be in the hundreds). A Terms is a value:
// With and Without return new sets and never change the receiver. The zero
// Terms is the empty set over no terms.
type Terms struct {
	w []uint64
	p int
}

// NewTerms returns the set of the given terms out of p candidates. It fails
// when p < 1 or an index is outside [0, p).
func NewTerms(p int, idx ...int) (Terms, error) {
	if p < 1 {
		return Terms{}, fmt.Errorf("ppl: a selection needs at least one candidate term, got p = %d", p)
	}
	t := Terms{w: make([]uint64, (p+63)/64), p: p}
	for _, i := range idx {
		if i < 0 || i >= p {
			return Terms{}, fmt.Errorf("ppl: term index %d out of range [0, %d)", i, p)
		}
		t.w[i/64] |= 1 << (i % 64)
	}
	return t, nil
}

// TermsFromIndicators returns the set whose members are the i with
// v[i] ≠ 0 (an indicator vector of 0s and 1s; any other value is an
// error), out of p = len(v) candidates.
func TermsFromIndicators(v []int) (Terms, error) {
	t, err := NewTerms(len(v))
	if err != nil {
		return Terms{}, err
	}
	for i, x := range v {
		switch x {
		case 0:
		case 1:
			t.w[i/64] |= 1 << (i % 64)
		default:
			return Terms{}, fmt.Errorf("ppl: indicator %d is %d, want 0 or 1", i, x)
		}
	}
	return t, nil
}

// ParseTerms reads a set written by String ("{1,4,7}", braces optional)
// out of p candidates.
func ParseTerms(p int, s string) (Terms, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	var idx []int
	if strings.TrimSpace(s) != "" {
		for _, f := range strings.Split(s, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return Terms{}, fmt.Errorf("ppl: term set %q: %q is not a term index", s, f)
			}
			idx = append(idx, i)
		}
	}
	return NewTerms(p, idx...)
}

// P is the number of candidate terms.
func (t Terms) P() int { return t.p }

// Has reports whether term i is in the set (false for i out of range).
func (t Terms) Has(i int) bool {
	if i < 0 || i >= t.p {
		return false
	}
	return t.w[i/64]&(1<<(i%64)) != 0
}

// With returns the set with term i added. It panics when i is out of
// range, a programming error like an index out of range.
func (t Terms) With(i int) Terms {
	t.check(i)
	c := t.clone()
	c.w[i/64] |= 1 << (i % 64)
	return c
}

// Without returns the set with term i removed. It panics when i is out of
// range.
func (t Terms) Without(i int) Terms {
	t.check(i)
	c := t.clone()
	c.w[i/64] &^= 1 << (i % 64)
	return c
}

func (t Terms) check(i int) {
	if i < 0 || i >= t.p {
		panic(fmt.Sprintf("ppl: term index %d out of range [0, %d)", i, t.p))
	}
}

func (t Terms) clone() Terms {
	return Terms{w: append([]uint64(nil), t.w...), p: t.p}
}

// Count is the number of terms in the set (the model size).
func (t Terms) Count() int {
	n := 0
	for _, w := range t.w {
		n += bits.OnesCount64(w)
	}
	return n
}

// Indices returns the members in increasing order.
func (t Terms) Indices() []int {
	out := make([]int, 0, t.Count())
	for k, w := range t.w {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, k*64+b)
			w &^= 1 << b
		}
	}
	return out
}

// Indicators returns the 0/1 indicator vector of length P.
func (t Terms) Indicators() []int {
	v := make([]int, t.p)
	for _, i := range t.Indices() {
		v[i] = 1
	}
	return v
}

// Rank is the number of members smaller than i: the position of term i's
// coordinate among the model's term coordinates when i is a member.
func (t Terms) Rank(i int) int {
	n := 0
	for k := 0; k < len(t.w) && k*64 < i; k++ {
		w := t.w[k]
		if i < (k+1)*64 {
			w &= (1 << (i % 64)) - 1
		}
		n += bits.OnesCount64(w)
	}
	return n
}

// Equal reports whether t and u are the same set over the same candidates.
func (t Terms) Equal(u Terms) bool {
	if t.p != u.p {
		return false
	}
	for k := range t.w {
		if t.w[k] != u.w[k] {
			return false
		}
	}
	return true
}

// Key returns a compact string identifying the set among sets over the
// same P, for use as a map key.
func (t Terms) Key() string { return string(t.AppendKey(nil)) }

// AppendKey appends the bytes of Key to dst, so that a caller looking a
// set up in a map (m[string(key)]) need not allocate.
func (t Terms) AppendKey(dst []byte) []byte {
	for _, w := range t.w {
		for j := range 8 {
			dst = append(dst, byte(w>>(8*j)))
		}
	}
	return dst
}

// SetIndices makes t the set of the given terms out of its P candidates,
// reusing its storage. It fails, leaving t unchanged, when an index is
// outside [0, P).
func (t *Terms) SetIndices(idx ...int) error {
	for _, i := range idx {
		if i < 0 || i >= t.p {
			return fmt.Errorf("ppl: term index %d out of range [0, %d)", i, t.p)
		}
	}
	clear(t.w)
	for _, i := range idx {
		t.w[i/64] |= 1 << (i % 64)
	}
	return nil
}

// String writes the members in increasing order, "{1,4,7}"; "{}" is the
// empty set.
func (t Terms) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for j, i := range t.Indices() {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteByte('}')
	return b.String()
}

// ModelPrior is a prior over the models of a selection.
type ModelPrior interface {
	// LogModelPrior returns log p(γ), normalised over the 2^P sets. It
	// must not keep t: callers reuse its storage.
	LogModelPrior(t Terms) float64
	// String names the prior.
	String() string
}

// BetaBinomial is the prior under which the model size is beta-binomial
// with parameters A and B, every model of one size equally likely:
// p(γ) = B(|γ| + A, P − |γ| + B) / B(A, B). A = B = 1 (the default of
// SelectionSpace, as in R's BAS and BMS) makes every model size equally
// likely, which guards against multiplicity.
type BetaBinomial struct{ A, B float64 }

// LogModelPrior returns log p(γ).
func (q BetaBinomial) LogModelPrior(t Terms) float64 {
	k, p := float64(t.Count()), float64(t.P())
	return lbeta(k+q.A, p-k+q.B) - lbeta(q.A, q.B)
}

func (q BetaBinomial) String() string { return fmt.Sprintf("beta-binomial(%g, %g)", q.A, q.B) }

// LogSizePrior returns log p(γ) of a model of k of p terms.
func (q BetaBinomial) LogSizePrior(p, k int) float64 {
	return lbeta(float64(k)+q.A, float64(p-k)+q.B) - lbeta(q.A, q.B)
}

// Bernoulli is the prior under which each term is in independently with
// probability Q.
type Bernoulli struct{ Q float64 }

// LogModelPrior returns log p(γ).
func (q Bernoulli) LogModelPrior(t Terms) float64 {
	k, p := float64(t.Count()), float64(t.P())
	return k*math.Log(q.Q) + (p-k)*math.Log1p(-q.Q)
}

func (q Bernoulli) String() string { return fmt.Sprintf("Bernoulli(%g)", q.Q) }

// LogSizePrior returns log p(γ) of a model of k of p terms.
func (q Bernoulli) LogSizePrior(p, k int) float64 {
	return float64(k)*math.Log(q.Q) + float64(p-k)*math.Log1p(-q.Q)
}

// UniformModels is the prior giving each of the 2^P models probability
// 2^−P (Bernoulli(1/2)).
type UniformModels struct{}

// LogModelPrior returns log p(γ) = −P log 2.
func (UniformModels) LogModelPrior(t Terms) float64 { return -float64(t.P()) * math.Ln2 }

func (UniformModels) String() string { return "uniform" }

// LogSizePrior returns log p(γ) = −p log 2.
func (UniformModels) LogSizePrior(p, _ int) float64 { return -float64(p) * math.Ln2 }

// SizePrior is a ModelPrior under which a model's probability depends on
// its number of terms alone (BetaBinomial, Bernoulli, UniformModels):
// samplers then weigh thousands of neighbours without building a term
// set for each.
type SizePrior interface {
	ModelPrior
	// LogSizePrior returns log p(γ) of every model of k of p terms; it
	// equals LogModelPrior of such a model.
	LogSizePrior(p, k int) float64
}

func lbeta(a, b float64) float64 {
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

// BuildFunc declares the model with the given active terms on a fresh
// Builder: first the parameters every model has (the always-in ones), then
// one coordinate per active term in increasing term index, then the
// parameters shared by all models (WithSelectionShared), and the
// likelihood. It may be called from several goroutines at once (one per
// chain), each with its own Builder, so it must not modify shared state.
type BuildFunc func(b *Builder, terms Terms) error

// SelectionSpace is the model space of a variable selection: 2^P models,
// one per set of active terms, each built by a BuildFunc only when first
// needed and kept in a bounded least-recently-used cache, so memory grows
// with the models visited and never with 2^P.
//
// Model γ's unconstrained vector is laid out as (always-in coordinates,
// one coordinate per active term in increasing term index, shared
// coordinates); Slot gives a term's position. NewSelectionSpace builds the
// empty model to learn the number of always-in coordinates, and every
// later model must have dimension Always() + |γ| + Shared().
//
// A SelectionSpace is not safe for concurrent use: Clone gives each chain
// its own cache, so that which models are built, and so every number, does
// not depend on scheduling.
type SelectionSpace struct {
	p      int
	build  BuildFunc
	names  []string
	shared int
	always int
	prior  ModelPrior
	bound  int
	ready  bool // the empty model was built: always is known
	cache  *lru
	builds *atomic.Int64 // per clone; atomic because Build may run on several goroutines
	hits   int
	masked *maskedSaturated // the saturated model of NewMaskedSelectionSpace, or nil
	qnames []string         // WithQuantities' names, or nil
	qfunc  QuantityFunc     // WithQuantities' function, or nil
	// evidence is the family's exact log evidence of a model, or nil;
	// neighbours, its evidences of a model's flip neighbours at once, or
	// nil.
	support    func(Terms) (bool, error) // WithModelSupport's, or nil
	posterior  func(Terms) ([]float64, *mat.SymDense, error)
	evidence   func(Terms) (float64, error)
	neighbours func(Terms, []float64) (float64, error)
	offset     func(Terms) (float64, error)
	scorer     func() (NeighbourhoodScorer, error) // WithNeighbourhoodScorer's, or nil
	corr       func(i, j int) float64              // WithTermCorrelation's, or nil
}

// SelectionOption configures NewSelectionSpace.
type SelectionOption func(*SelectionSpace) error

// WithSelectionShared declares that the last n coordinates of every
// model are parameters shared by all models (a noise scale, say), carried
// across jumps.
func WithSelectionShared(n int) SelectionOption {
	return func(s *SelectionSpace) error {
		if n < 0 {
			return fmt.Errorf("ppl: %d shared parameters", n)
		}
		s.shared = n
		return nil
	}
}

// WithTermNames names the P terms (the default is x1, …, xP).
func WithTermNames(names ...string) SelectionOption {
	return func(s *SelectionSpace) error {
		if len(names) != s.p {
			return fmt.Errorf("ppl: %d term names for %d terms", len(names), s.p)
		}
		seen := map[string]bool{}
		for i, n := range names {
			if n == "" {
				return fmt.Errorf("ppl: term name %d is empty", i)
			}
			if seen[n] {
				return fmt.Errorf("ppl: duplicate term name %q", n)
			}
			seen[n] = true
		}
		s.names = append([]string(nil), names...)
		return nil
	}
}

// WithModelPrior sets the prior over models (the default is
// BetaBinomial{1, 1}).
func WithModelPrior(q ModelPrior) SelectionOption {
	return func(s *SelectionSpace) error {
		switch q := q.(type) {
		case nil:
			return errors.New("ppl: nil model prior")
		case BetaBinomial:
			if !(q.A > 0 && q.B > 0) || math.IsInf(q.A, 0) || math.IsInf(q.B, 0) {
				return fmt.Errorf("ppl: beta-binomial model prior needs finite A, B > 0, got %g, %g", q.A, q.B)
			}
		case Bernoulli:
			if !(q.Q > 0 && q.Q < 1) {
				return fmt.Errorf("ppl: Bernoulli model prior needs 0 < Q < 1, got %g", q.Q)
			}
		}
		s.prior = q
		return nil
	}
}

// WithModelEvidence declares that logEvidence(γ) is model γ's exact log
// evidence, log ∫ π_γ(θ) dθ of the model's log-density (up to a constant
// common to every model), known in closed form without building the
// model: a conjugate family's, say. Samplers then weigh a model's
// neighbours without building them (informed jumps), and report exact
// evidences. logEvidence is called from several goroutines at once, so it
// must be safe for concurrent use; −Inf is allowed (a model of no prior
// mass), NaN is an error.
func WithModelEvidence(logEvidence func(Terms) (float64, error)) SelectionOption {
	return func(s *SelectionSpace) error {
		if logEvidence == nil {
			return errors.New("ppl: nil model evidence function")
		}
		s.evidence = logEvidence
		return nil
	}
}

// WithModelOffset adds offset(γ) to every log-density of model γ: a term
// constant in the parameters that differs between models (a prior's
// normalising constant, such as a g-prior's ½ log|X_γᵀX_γ|), which a
// masked space's saturated graph cannot hold and a per-model graph need
// not recompute. Both kinds of space apply it. An offset of −Inf excludes
// the model: LogPrior gives it −Inf (prior probability zero, so a sampler
// never moves there) and its built model carries no offset. offset must
// be safe for concurrent use; an error or a NaN or +Inf offset fails the
// model's build and LogPrior.
func WithModelOffset(offset func(Terms) (float64, error)) SelectionOption {
	return func(s *SelectionSpace) error {
		if offset == nil {
			return errors.New("ppl: nil model offset")
		}
		s.offset = offset
		return nil
	}
}

// WithNeighbourEvidence declares, beside WithModelEvidence, a faster way
// to the exact log evidences of all P flip neighbours of a model at once:
// neighbours(γ, le) writes into le[j] the log evidence of γ with term j
// added (when γ lacks it) or dropped (when it has it), −Inf for a model of
// no mass, and returns γ's own. A conjugate family can often share one
// factorisation among them. It must agree with WithModelEvidence's
// function to rounding and be safe for concurrent use.
func WithNeighbourEvidence(neighbours func(t Terms, le []float64) (float64, error)) SelectionOption {
	return func(s *SelectionSpace) error {
		if neighbours == nil {
			return errors.New("ppl: nil neighbour evidence function")
		}
		s.neighbours = neighbours
		return nil
	}
}

// NeighbourLogEvidences writes into le (length P) the exact log evidences
// of model t's P flip neighbours and returns t's own
// (WithNeighbourEvidence, or WithModelEvidence one neighbour at a time).
func (s *SelectionSpace) NeighbourLogEvidences(t Terms, le []float64) (float64, error) {
	if len(le) != s.p {
		return math.NaN(), fmt.Errorf("ppl: %d neighbour evidences for %d terms", len(le), s.p)
	}
	if s.neighbours == nil || s.evidence == nil {
		self, err := s.LogEvidence(t)
		if err != nil {
			return self, err
		}
		for j := range s.p {
			nb := t.With(j)
			if t.Has(j) {
				nb = t.Without(j)
			}
			if le[j], err = s.LogEvidence(nb); err != nil {
				return self, err
			}
		}
		return self, nil
	}
	if err := s.Check(t); err != nil {
		return math.NaN(), err
	}
	self, err := s.neighbours(t, le)
	if err != nil {
		return self, err
	}
	for j, v := range le {
		if math.IsNaN(v) {
			return self, fmt.Errorf("ppl: the log evidence of a neighbour of model %v (term %d flipped) is NaN", t, j)
		}
	}
	if math.IsNaN(self) {
		return self, fmt.Errorf("ppl: the log evidence of model %v is NaN", t)
	}
	return self, nil
}

// WithModelPosterior declares a Gaussian approximation of each model's
// posterior known in closed form (a conjugate family's Laplace
// approximation, say): posterior(γ) returns its mean and precision in the
// model's unconstrained coordinates (always-in, active terms, shared).
// Samplers then use it as the model's transport, with no fit. It must be
// safe for concurrent use; an error fails the model's build.
func WithModelPosterior(posterior func(t Terms) (mean []float64, precision *mat.SymDense, err error)) SelectionOption {
	return func(s *SelectionSpace) error {
		if posterior == nil {
			return errors.New("ppl: nil model posterior function")
		}
		s.posterior = posterior
		return nil
	}
}

// HasPosterior reports whether the space gives its models' Gaussian
// posterior approximations (WithModelPosterior).
func (s *SelectionSpace) HasPosterior() bool { return s.posterior != nil }

// ModelPosterior returns model t's Gaussian posterior approximation
// (WithModelPosterior): its mean and precision, checked to be of the
// model's dimension and finite.
func (s *SelectionSpace) ModelPosterior(t Terms) ([]float64, *mat.SymDense, error) {
	if s.posterior == nil {
		return nil, nil, errors.New("ppl: the selection space has no model posteriors (WithModelPosterior)")
	}
	if err := s.Check(t); err != nil {
		return nil, nil, err
	}
	mean, prec, err := s.posterior(t)
	if err != nil {
		return nil, nil, fmt.Errorf("ppl: the posterior of the model with terms %v: %w", t, err)
	}
	if d := s.Dim(t); len(mean) != d || prec == nil || prec.SymmetricDim() != d {
		return nil, nil, fmt.Errorf("ppl: the posterior of the model with terms %v has a mean of %d and a precision of another size than its dimension %d", t, len(mean), d)
	}
	return mean, prec, nil
}

// HasEvidence reports whether the space knows its models' exact evidences
// (WithModelEvidence).
func (s *SelectionSpace) HasEvidence() bool { return s.evidence != nil }

// LogEvidence returns model t's exact log evidence (WithModelEvidence), or
// an error when the space has none.
func (s *SelectionSpace) LogEvidence(t Terms) (float64, error) {
	if s.evidence == nil {
		return math.NaN(), errors.New("ppl: the selection space has no exact model evidence (WithModelEvidence)")
	}
	if err := s.Check(t); err != nil {
		return math.NaN(), err
	}
	le, err := s.evidence(t)
	if err == nil && math.IsNaN(le) {
		err = fmt.Errorf("ppl: the log evidence of model %v is NaN", t)
	}
	return le, err

}

// modelOffset is offset(t), checked: −Inf (excluded) or finite.
func (s *SelectionSpace) modelOffset(t Terms) (float64, error) {
	if s.offset == nil {
		return 0, nil
	}
	off, err := s.offset(t)
	if err != nil {
		return math.NaN(), fmt.Errorf("ppl: the log-density offset of the model with terms %v: %w", t, err)
	}
	if math.IsNaN(off) || math.IsInf(off, 1) {
		return math.NaN(), fmt.Errorf("ppl: the log-density offset of the model with terms %v is %v", t, off)
	}
	return off, nil
}

// NeighbourhoodScorer is one chain's closed-form view of a selection
// space: it keeps the statistics of the model it last scored (a Cholesky
// factor of its Gram matrix, say), so that the exact log evidences of all
// its add, drop and swap neighbours cost little more than its own, and
// draws that model's parameters from their exact posterior. Samplers then
// move on the models alone (a collapsed sampler). Its methods are those
// of kernels.SelectionScorer.
type NeighbourhoodScorer interface {
	// Score makes active (strictly increasing term indices) the scorer's
	// model and returns its log evidence, equal to WithModelEvidence's to
	// rounding; models outside the space's support (WithModelSupport)
	// score −Inf.
	Score(active []int) (float64, error)
	// Flips writes into flip[j] (length P) the log evidence of the last
	// scored model with term j flipped (added or dropped).
	Flips(flip []float64)
	// Swaps writes into row[j] (length P) the log evidence of the last
	// scored model with its r-th term replaced by j, for every j it lacks,
	// and into row[active[r]] the model's own. Flips' and Swaps' values
	// only weigh proposals: they may be approximations (a fast logarithm)
	// if each is a fixed function of the model it scores, since samplers
	// correct them by Score's values.
	Swaps(r int, row []float64)
	// Draw writes into theta a draw from the exact posterior of the last
	// scored model's unconstrained parameters, laid out as the model's.
	Draw(rng *rand.Rand, theta []float64) error
}

// WithNeighbourhoodScorer declares, beside WithModelEvidence, a scorer
// of models and their neighbourhoods for each chain (newScorer is called
// once per chain, and its scorers are used by one goroutine each). With a
// SizePrior model prior, selection's samplers then move on the models
// alone, their parameters drawn from each model's exact posterior.
func WithNeighbourhoodScorer(newScorer func() (NeighbourhoodScorer, error)) SelectionOption {
	return func(s *SelectionSpace) error {
		if newScorer == nil {
			return errors.New("ppl: nil neighbourhood scorer")
		}
		s.scorer = newScorer
		return nil
	}
}

// HasScorer reports whether the space gives neighbourhood scorers
// (WithNeighbourhoodScorer).
func (s *SelectionSpace) HasScorer() bool { return s.scorer != nil }

// NewScorer returns a new neighbourhood scorer (WithNeighbourhoodScorer)
// for one chain.
func (s *SelectionSpace) NewScorer() (NeighbourhoodScorer, error) {
	if s.scorer == nil {
		return nil, errors.New("ppl: the selection space has no neighbourhood scorer (WithNeighbourhoodScorer)")
	}
	return s.scorer()
}

// WithTermCorrelation declares corr(i, j), the correlation of terms i
// and j in the data (of their columns, for a regression): the
// correlation-aware summaries of a selection (credible sets of
// near-copies, their purity) read it. It must be safe for concurrent use.
func WithTermCorrelation(corr func(i, j int) float64) SelectionOption {
	return func(s *SelectionSpace) error {
		if corr == nil {
			return errors.New("ppl: nil term correlation")
		}
		s.corr = corr
		return nil
	}
}

// TermCorrelation returns the correlation of terms i and j
// (WithTermCorrelation), and false when the space has none.
func (s *SelectionSpace) TermCorrelation(i, j int) (float64, bool) {
	if s.corr == nil || i < 0 || j < 0 || i >= s.p || j >= s.p {
		return math.NaN(), false
	}
	return s.corr(i, j), true
}

// DefaultModelCache is the default bound on the models a SelectionSpace
// (each clone) keeps compiled.
const DefaultModelCache = 2048

// WithModelCache bounds the number of compiled models each clone keeps
// (least recently used first out); n ≥ 2.
func WithModelCache(n int) SelectionOption {
	return func(s *SelectionSpace) error {
		if n < 2 {
			return fmt.Errorf("ppl: model cache of %d models, want at least 2", n)
		}
		s.bound = n
		return nil
	}
}

// newSelectionSpace checks what the selection spaces share (p ≥ 1, a
// build function, options) and returns the space with its options applied
// and default names.
func newSelectionSpace(p int, nilBuild bool, bound int, opts []SelectionOption) (*SelectionSpace, error) {
	if p < 1 {
		return nil, fmt.Errorf("ppl: a selection needs at least one candidate term, got p = %d", p)
	}
	if nilBuild {
		return nil, errors.New("ppl: nil build function")
	}
	s := &SelectionSpace{p: p, prior: BetaBinomial{1, 1}, bound: bound, builds: new(atomic.Int64)}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("ppl: selection option %d is nil", i)
		}
		if err := o(s); err != nil {
			return nil, err
		}
	}
	if s.names == nil {
		s.names = make([]string, p)
		for i := range s.names {
			s.names[i] = "x" + strconv.Itoa(i+1)
		}
	}
	return s, nil
}

// NewSelectionSpace returns the space of the 2^p models built by build. It
// builds the empty model to check the build function, and fails when p < 1,
// build is nil or the empty model cannot be built.
func NewSelectionSpace(p int, build BuildFunc, opts ...SelectionOption) (*SelectionSpace, error) {
	s, err := newSelectionSpace(p, build == nil, DefaultModelCache, opts)
	if err != nil {
		return nil, err
	}
	s.build = build
	s.cache = newLRU(s.bound)
	empty, _ := NewTerms(p)
	m, err := s.buildModel(empty)
	if err != nil {
		return nil, fmt.Errorf("ppl: building the empty model: %w", err)
	}
	s.always = m.Dim() - s.shared
	if s.always < 0 {
		return nil, fmt.Errorf("ppl: the empty model has dimension %d, fewer than the %d shared parameters", m.Dim(), s.shared)
	}
	s.ready = true
	s.cache.put(empty.Key(), m)
	return s, nil
}

// P is the number of candidate terms.
func (s *SelectionSpace) P() int { return s.p }

// Always is the number of coordinates every model has before the terms'.
func (s *SelectionSpace) Always() int { return s.always }

// Shared is the number of shared coordinates, last in every model.
func (s *SelectionSpace) Shared() int { return s.shared }

// Names returns the term names. The caller must not modify the slice.
func (s *SelectionSpace) Names() []string { return s.names }

// Prior returns the prior over models.
func (s *SelectionSpace) Prior() ModelPrior { return s.prior }

// CacheBound is the bound on the models each clone keeps compiled.
func (s *SelectionSpace) CacheBound() int { return s.bound }

// Dim is the unconstrained dimension of model t.
func (s *SelectionSpace) Dim(t Terms) int { return s.always + t.Count() + s.shared }

// Slot returns the position of term i's coordinate in the unconstrained
// vector of a model with terms t ∪ {i}.
func (s *SelectionSpace) Slot(t Terms, i int) int { return s.always + t.Rank(i) }

// Check returns an error when t is not a set over this space's terms.
func (s *SelectionSpace) Check(t Terms) error {
	if t.p != s.p {
		return fmt.Errorf("ppl: a term set over %d terms for a space of %d", t.p, s.p)
	}
	return nil
}

// LogPrior returns log p(γ) under the space's model prior, −Inf for a
// model that WithModelOffset excludes.
func (s *SelectionSpace) LogPrior(t Terms) (float64, error) {
	if err := s.Check(t); err != nil {
		return math.Inf(-1), err
	}
	if s.support != nil {
		in, err := s.support(t)
		if err != nil {
			return math.NaN(), fmt.Errorf("ppl: the support of the model with terms %v: %w", t, err)
		}
		if !in {
			return math.Inf(-1), nil
		}
		return s.prior.LogModelPrior(t), nil
	}
	off, err := s.modelOffset(t)
	if err != nil {
		return math.NaN(), err
	}
	if math.IsInf(off, -1) {
		return off, nil
	}
	return s.prior.LogModelPrior(t), nil
}

// WithModelSupport declares which models have prior mass, beside
// WithModelOffset: LogPrior then asks support(γ) instead of computing the
// offset, which a sampler's many calls for the neighbours of its model
// need not pay for. support must agree with the offset (false exactly
// where the offset is −Inf) and be safe for concurrent use.
func WithModelSupport(support func(t Terms) (bool, error)) SelectionOption {
	return func(s *SelectionSpace) error {
		if support == nil {
			return errors.New("ppl: nil model support function")
		}
		s.support = support
		return nil
	}
}

// Model returns model t, from the cache or built now (and then cached,
// evicting the least recently used model beyond the bound).
func (s *SelectionSpace) Model(t Terms) (*GraphModel, error) {
	if err := s.Check(t); err != nil {
		return nil, err
	}
	key := t.Key()
	if m, ok := s.cache.get(key); ok {
		s.hits++
		return m, nil
	}
	m, err := s.buildModel(t)
	if err != nil {
		return nil, err
	}
	s.cache.put(key, m)
	return m, nil
}

// Build builds model t without the cache. Unlike Model it is safe for
// concurrent use (when the build function is).
func (s *SelectionSpace) Build(t Terms) (*GraphModel, error) {
	if err := s.Check(t); err != nil {
		return nil, err
	}
	return s.buildModel(t)
}

func (s *SelectionSpace) buildModel(t Terms) (m *GraphModel, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("ppl: the build function panicked for terms %v: %v", t, r)
		}
	}()
	if s.builds != nil {
		s.builds.Add(1)
	}
	off, err := s.modelOffset(t)
	if err != nil {
		return nil, err
	}
	if math.IsInf(off, -1) {
		off = 0
	}
	if s.masked != nil {
		m = s.masked.view(t)
		m.offset = off
		return m, nil
	}
	b := NewBuilder()
	if err := s.build(b, t); err != nil {
		return nil, fmt.Errorf("ppl: building the model with terms %v: %w", t, err)
	}
	m, err = b.Model()
	if err != nil {
		return nil, fmt.Errorf("ppl: building the model with terms %v: %w", t, err)
	}
	if s.ready { // not the first (empty) model
		if want := s.always + t.Count() + s.shared; m.Dim() != want {
			return nil, fmt.Errorf("ppl: the model with terms %v has dimension %d, want %d (%d always-in + %d terms + %d shared): the build function must declare one coordinate per active term",
				t, m.Dim(), want, s.always, t.Count(), s.shared)
		}
	}
	m.offset = off
	return m, nil
}

// Builds counts the models built (by Model and Build, which may run on
// several goroutines at once) since this clone was made.
func (s *SelectionSpace) Builds() int { return int(s.builds.Load()) }

// Hits counts Model's cache hits since this clone was made.
func (s *SelectionSpace) Hits() int { return s.hits }

// Cached is the number of models in the cache.
func (s *SelectionSpace) Cached() int { return s.cache.len() }

// Clone returns a copy with an empty cache of its own, for another chain.
func (s *SelectionSpace) Clone() *SelectionSpace {
	c := *s
	c.cache = newLRU(s.bound)
	c.builds, c.hits = new(atomic.Int64), 0
	return &c
}

// lru is a least-recently-used cache of compiled models.
type lru struct {
	mu    sync.Mutex // a clone is used by one chain; the lock only keeps misuse safe
	bound int
	order *list.List // front: most recent
	items map[string]*list.Element
}

type lruItem struct {
	key string
	m   *GraphModel
}

func newLRU(bound int) *lru {
	return &lru{bound: bound, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) (*GraphModel, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruItem).m, true
}

func (c *lru) put(key string, m *GraphModel) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.Value.(*lruItem).m = m
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&lruItem{key: key, m: m})
	for c.order.Len() > c.bound {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruItem).key)
	}
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
