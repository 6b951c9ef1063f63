package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SelectionScorer is one chain's view of a variable selection whose
// models' evidences and posteriors are known in closed form (a conjugate
// regression): it keeps the statistics of the model it last scored, so
// that the evidences of its add, drop and swap neighbours cost little
// more than the model's own.
type SelectionScorer interface {
	// Score makes active (strictly increasing term indices) the scorer's
	// model and returns its log evidence (−Inf outside the space's
	// support).
	Score(active []int) (float64, error)
	// Flips writes into flip[j] (length P) the log evidence of the last
	// scored model with term j flipped (added when it lacks it, dropped
	// when it has it).
	Flips(flip []float64)
	// Swaps writes into row[j] (length P) the log evidence of the last
	// scored model with its r-th term replaced by j, for every j the model
	// lacks, and into row[active[r]] the model's own (the entries of its
	// other terms are not read).
	//
	// Flips' and Swaps' values only weigh proposals: they may be
	// approximations (a fast logarithm, say) as long as each is a fixed
	// function of the model it scores, since the kernel's acceptance
	// corrects them by Score's values of the two models.
	Swaps(r int, row []float64)
	// Draw writes into theta a draw from the posterior of the parameters
	// of the model last scored, laid out as SelectionModel's coordinates.
	Draw(rng *rand.Rand, theta []float64) error
}

// CollapsedTarget is a variable selection whose models' evidences are
// known in closed form and whose model prior depends on a model's size
// alone: the chain then needs no parameters to move between models.
type CollapsedTarget interface {
	// NumTerms is P.
	NumTerms() int
	// LogSizePrior returns log p(γ) of every model of k terms.
	LogSizePrior(k int) float64
	// NewScorer returns a scorer of the target's models for one chain.
	NewScorer() (SelectionScorer, error)
}

// Balancing names the balancing function g of a locally informed
// proposal: a neighbour γ' of γ is proposed with probability
// ∝ g(π(γ')/π(γ)), with g(t) = t g(1/t).
type Balancing uint8

// The balancing functions: Barker's t/(1+t) (the default) and √t. Far
// from the posterior's bulk √t fails: from a chain's first model, adding
// one strong term makes another strong term's weight soar, and the
// acceptance Z(γ)/Z(γ') falls to 10⁻⁵ (a chain of 2,000 steps never left
// the empty model of a 6-term regression with two effects), where
// Barker's weights, at most 1, keep it near 1.
const (
	BalanceBarker Balancing = iota
	BalanceSqrt
)

func (b Balancing) String() string {
	switch b {
	case BalanceSqrt:
		return "sqrt"
	case BalanceBarker:
		return "barker"
	}
	return fmt.Sprintf("Balancing(%d)", uint8(b))
}

// CollapsedSettings tunes CollapsedKernel; the zero value gives the
// defaults.
type CollapsedSettings struct {
	// SwapProb is the probability of a swap move rather than an add or
	// drop (default 0.9, negative: none). Swaps are what mixes among
	// correlated terms (on N3finemapping, ESS of the contested pair's
	// PIPs per step rose 4.4× from 0.5 to 0.9, under √t weights); one add or drop in ten
	// steps is plenty to move the model's size.
	SwapProb float64
	// Uniform proposes uniformly (MC3: a uniform term flipped, or a
	// uniform active term swapped for a uniform inactive one, accepted by
	// the ratio of posterior probabilities) instead of by the models'
	// evidences.
	Uniform bool
	// Balancing is the informed add/drop proposal's balancing function.
	Balancing Balancing
}

// CollapsedState is the state of a collapsed selection chain: the model
// alone, with its log evidence and log prior.
type CollapsedState struct {
	Active      []int
	LogEvidence float64
	LogPrior    float64
}

// CollapsedKernel is the selection kernel of a target whose models'
// evidences and posteriors are exact (CollapsedTarget). It is the limit of
// SelectionKernel's transport jumps when every transport is its model's
// exact posterior: the jump's acceptance ratio is then the ratio of the
// models' posterior probabilities, whatever the parameters, so the chain
// moves on the models alone and parameters are drawn from a model's
// posterior only when wanted (Draw).
//
// Each step is, by default, one of two moves, both exact for the
// posterior over models:
//   - a swap (probability SwapProb): one of the model's k terms, chosen
//     uniformly, leaves its slot, and the slot is refilled by a Gibbs
//     draw among every term the rest of the model lacks (the leaving term
//     included), each with probability ∝ π(γ∖{i} ∪ {j}). Near-copies of
//     a term trade places as often as their posterior odds say, without
//     passing through a model of low probability;
//   - an add or drop: term j flipped with probability ∝ g(π(γ')/π(γ))
//     over all P flips (a locally balanced proposal; Zanella 2020),
//     accepted with probability min{1, Z(γ)/Z(γ')}, Z the sum of a
//     model's flip weights.
//
// The scorer gives all P evidences a move needs from statistics kept for
// the current model, so that a step costs O(k²P). A kernel keeps the
// scores of the current and the proposed model: one per chain.
type CollapsedKernel struct {
	target   CollapsedTarget
	set      CollapsedSettings
	p        int
	cur, nxt *collapsedScores
	next     []int
	row, le  []float64
	key      []byte
	flips    reuseCache[flipScores] // by model
	rows     reuseCache[swapRow]    // by the rest of a model
}

// reuseCache is one of a kernel's bounded caches of scores by key. When
// full it is cleared whole, so that what it holds depends on the chain's
// own history alone, and the cleared entries are reused (every value is
// overwritten before it is read).
type reuseCache[T any] struct {
	m     map[string]*T
	spare []*T
	bound int // entries
	fresh func() *T
}

func newReuseCache[T any](bound int, fresh func() *T) reuseCache[T] {
	return reuseCache[T]{m: map[string]*T{}, bound: bound, fresh: fresh}
}

// put returns an entry to fill, stored under key.
func (c *reuseCache[T]) put(key []byte) *T {
	if len(c.m) > c.bound {
		for _, v := range c.m {
			c.spare = append(c.spare, v)
		}
		clear(c.m)
	}
	var v *T
	if n := len(c.spare); n > 0 {
		v, c.spare = c.spare[n-1], c.spare[:n-1]
	} else {
		v = c.fresh()
	}
	c.m[string(key)] = v
	return v
}

// collapsedScores is a scorer with the scores of its model.
type collapsedScores struct {
	sc   SelectionScorer
	self float64     // log evidence + log prior
	fl   *flipScores // the model's flip weights, once computed
}

// flipScores are a model's flip weights: lw holds each flip's log
// posterior ratio log t, w its weight g(t) divided by e^scale, so that
// logZ = scale + log Σ w. They are a fixed function of the model: the
// kernel keeps them for the models it revisits.
type flipScores struct {
	lw, w      []float64
	sum, scale float64
	logZ       float64
}

// swapRow is a slot's Gibbs distribution: cum[j] is the sum of the
// weights of terms 0…j, each ∝ π(S ∪ {j}) over the terms j the rest S of
// the model lacks (0 for S's). It is a fixed function of S.
type swapRow struct {
	cum []float64
}

// cacheFloats bounds each of a kernel's two caches (flip weights by
// model, swap rows by the rest of a model) to 8 MB: a chain revisits the
// models and slots of its posterior's bulk far more often than it meets
// new ones, so most steps read their P weights instead of computing P
// logarithms and exponentials.
const cacheFloats = 1 << 19

// NewCollapsedKernel returns the kernel over target's models.
func NewCollapsedKernel(target CollapsedTarget, s *CollapsedSettings) (*CollapsedKernel, error) {
	if target == nil {
		return nil, errors.New("kernels: nil collapsed selection target")
	}
	p := target.NumTerms()
	if p < 1 {
		return nil, fmt.Errorf("kernels: a selection needs at least one term, got %d", p)
	}
	var set CollapsedSettings
	if s != nil {
		set = *s
	}
	if set.Balancing > BalanceSqrt {
		return nil, fmt.Errorf("kernels: unknown balancing function %v", set.Balancing)
	}
	switch {
	case set.SwapProb == 0:
		set.SwapProb = 0.9
	case set.SwapProb < 0:
		set.SwapProb = 0
	case set.SwapProb >= 1 || math.IsNaN(set.SwapProb):
		return nil, fmt.Errorf("kernels: swap probability %v, want below 1", set.SwapProb)
	}
	k := &CollapsedKernel{target: target, set: set, p: p, row: make([]float64, p), le: make([]float64, p),
		flips: newReuseCache(cacheFloats/(2*p), func() *flipScores {
			return &flipScores{lw: make([]float64, p), w: make([]float64, p)}
		}),
		rows: newReuseCache(cacheFloats/p, func() *swapRow { return &swapRow{cum: make([]float64, p)} })}
	for _, c := range []**collapsedScores{&k.cur, &k.nxt} {
		sc, err := target.NewScorer()
		if err != nil {
			return nil, err
		}
		*c = &collapsedScores{sc: sc}
	}
	return k, nil
}

// Init returns the state at model active, which must have positive
// posterior probability.
func (k *CollapsedKernel) Init(active []int) (*CollapsedState, error) {
	active = slices.Clone(active)
	for i, a := range active {
		if a < 0 || a >= k.p || (i > 0 && a <= active[i-1]) {
			return nil, fmt.Errorf("kernels: active terms %v are not strictly increasing indices in [0, %d)", active, k.p)
		}
	}
	if err := k.score(k.cur, active); err != nil {
		return nil, err
	}
	if !finite(k.cur.self) {
		return nil, fmt.Errorf("kernels: the initial model %v has log posterior %v", active, k.cur.self)
	}
	lp := k.target.LogSizePrior(len(active))
	return &CollapsedState{Active: active, LogEvidence: k.cur.self - lp, LogPrior: lp}, nil
}

// score makes active c's model.
func (k *CollapsedKernel) score(c *collapsedScores, active []int) error {
	le, err := c.sc.Score(active)
	if err != nil {
		return err
	}
	if math.IsNaN(le) {
		return fmt.Errorf("kernels: model %v has log evidence NaN", active)
	}
	c.self = le + k.target.LogSizePrior(len(active))
	c.fl = nil
	return nil
}

// setKey writes the key of the terms active, leaving out the term out
// (−1: none), into k.key.
func (k *CollapsedKernel) setKey(active []int, out int) {
	k.key = k.key[:0]
	for _, a := range active {
		if a != out {
			k.key = append(k.key, byte(a), byte(a>>8), byte(a>>16), byte(a>>24))
		}
	}
}

// flipWeights gives c (model active) its flip weights, from the cache or
// computed.
func (k *CollapsedKernel) flipWeights(c *collapsedScores, active []int) {
	if c.fl != nil {
		return
	}
	k.setKey(active, -1)
	if f, ok := k.flips.m[string(k.key)]; ok {
		c.fl = f
		return
	}
	f := k.flips.put(k.key)
	k.computeFlips(c, active, f)
	c.fl = f
}

// computeFlips writes the flip weights of c's model active into f.
func (k *CollapsedKernel) computeFlips(c *collapsedScores, active []int, f *flipScores) {
	c.sc.Flips(k.le)
	n := len(active)
	lpUp, lpDown := k.target.LogSizePrior(n+1), math.Inf(-1)
	if n > 0 {
		lpDown = k.target.LogSizePrior(n - 1)
	}
	r := 0
	top := math.Inf(-1)
	for j, le := range k.le {
		lp := lpUp
		if r < n && active[r] == j {
			lp = lpDown
			r++
		}
		lr := lp + le - c.self
		if math.IsNaN(lr) {
			lr = math.Inf(-1)
		}
		f.lw[j] = lr
		top = math.Max(top, lr)
	}
	f.sum = 0
	if k.set.Balancing == BalanceBarker {
		// Barker's weights are at most 1: no scale is needed, and a
		// weight is its flip's conditional probability (Conditionals).
		f.scale = 0
		for j, lr := range f.lw {
			w := 1.0
			if lr < 37 {
				t := math.Exp(lr)
				w = t / (1 + t)
			}
			f.w[j] = w
			f.sum += w
		}
	} else {
		// √t's weights are scaled by the largest; those below 2⁻⁶⁰ of it
		// do not change the sum and stay 0.
		f.scale = top / 2
		for j, lr := range f.lw {
			w := 0.0
			if d := lr/2 - f.scale; d > -60*math.Ln2 {
				w = math.Exp(d)
			}
			f.w[j] = w
			f.sum += w
		}
	}
	f.logZ = f.scale + math.Log(f.sum)
}

// balance is log g(t) of the log ratio lr = log t.
func balance(g Balancing, lr float64) float64 {
	if math.IsNaN(lr) {
		return math.Inf(-1)
	}
	if g == BalanceSqrt {
		return lr / 2
	}
	// log(t/(1+t)) = −log(1 + 1/t), to rounding lr below −37 and 0
	// above 37.
	switch {
	case lr < -37:
		return lr
	case lr > 37:
		return 0
	case lr > 0:
		return -math.Log1p(math.Exp(-lr))
	}
	return lr - math.Log1p(math.Exp(lr))
}

// Step makes one move from st's model and updates st in place.
func (k *CollapsedKernel) Step(rng *rand.Rand, st *CollapsedState) (SelectionInfo, error) {
	info := SelectionInfo{Term: -1, Out: -1}
	n := len(st.Active)
	swap := rng.Float64() < k.set.SwapProb
	switch {
	case swap && (n == 0 || n == k.p):
		return info, nil
	case swap && k.set.Uniform:
		in := rng.IntN(k.p - n)
		for _, a := range st.Active { // the in-th inactive term
			if a <= in {
				in++
			}
		}
		k.swapTo(st, st.Active[rng.IntN(n)], in, &info)
		return info, k.uniform(rng, st, &info)
	case swap:
		return info, k.gibbsSwap(rng, st, &info)
	case k.set.Uniform:
		k.flipTo(st, rng.IntN(k.p), &info)
		return info, k.uniform(rng, st, &info)
	}
	k.flipWeights(k.cur, st.Active)
	fl := k.cur.fl
	if fl.sum == 0 {
		return info, nil
	}
	u := rng.Float64() * fl.sum
	j := -1
	for i, v := range fl.w {
		if v > 0 {
			j = i
			if u < v {
				break
			}
			u -= v
		}
	}
	k.flipTo(st, j, &info)
	fwd := balance(k.set.Balancing, fl.lw[j]) - fl.logZ
	if err := k.score(k.nxt, k.next); err != nil {
		return info, err
	}
	if math.IsInf(k.nxt.self, -1) {
		return info, nil
	}
	k.flipWeights(k.nxt, k.next)
	// The reverse probability in logs: a move far uphill has a way back
	// whose weight is below the cut (drawn with probability < 10⁻¹⁸, so
	// never in practice), and its acceptance must still be its own.
	rev := balance(k.set.Balancing, k.nxt.fl.lw[j]) - k.nxt.fl.logZ
	return info, k.metropolis(rng, st, &info, rev-fwd)
}

// uniform scores k.next, proposed by a symmetric move, and accepts or
// rejects it.
func (k *CollapsedKernel) uniform(rng *rand.Rand, st *CollapsedState, info *SelectionInfo) error {
	if err := k.score(k.nxt, k.next); err != nil {
		return err
	}
	return k.metropolis(rng, st, info, 0)
}

// metropolis accepts or rejects the move to k.next, scored in k.nxt, with
// log proposal ratio lq = log q(γ|γ')/q(γ'|γ).
func (k *CollapsedKernel) metropolis(rng *rand.Rand, st *CollapsedState, info *SelectionInfo, lq float64) error {
	logA := k.nxt.self - k.cur.self + lq
	if math.IsNaN(logA) {
		logA = math.Inf(-1)
	}
	info.AcceptProb = math.Exp(min(0, logA))
	if logA >= 0 || rng.Float64() < math.Exp(logA) {
		info.Accepted = true
		k.moveTo(st)
	}
	return nil
}

// moveTo makes k.next, scored in k.nxt, st's model.
func (k *CollapsedKernel) moveTo(st *CollapsedState) {
	k.cur, k.nxt = k.nxt, k.cur
	st.Active, k.next = k.next, st.Active
	st.LogPrior = k.target.LogSizePrior(len(st.Active))
	st.LogEvidence = k.cur.self - st.LogPrior
}

// gibbsSwap empties a uniform slot of st's model and refills it by a
// draw among the terms the rest S of the model lacks, each with
// probability ∝ its row's weight, π(S ∪ {j}) to the scorer's precision: a
// Gibbs draw, corrected by a Metropolis–Hastings test of the two models'
// exact values (the same S gives both directions the same row).
func (k *CollapsedKernel) gibbsSwap(rng *rand.Rand, st *CollapsedState, info *SelectionInfo) error {
	n := len(st.Active)
	r := rng.IntN(n)
	out := st.Active[r]
	row := k.swapRow(st, r)
	cum := row.cum
	u := rng.Float64() * cum[k.p-1]
	in, _ := slices.BinarySearchFunc(cum, u, func(c, u float64) int {
		if c <= u {
			return -1
		}
		return 1
	})
	in = min(in, k.p-1)
	for in > 0 && cum[in] == cum[in-1] { // a weight of 0 is never drawn
		in--
	}
	info.Move, info.Term, info.Out = MoveSwap, in, out
	if in == out {
		info.AcceptProb = 1
		return nil
	}
	k.swapTo(st, out, in, info)
	if err := k.score(k.nxt, k.next); err != nil {
		return err
	}
	if math.IsInf(k.nxt.self, -1) {
		return nil
	}
	// log π(γ')q(γ|S)/(π(γ)q(γ'|S)) with q ∝ the row's weights.
	lq := math.Log(weightAt(cum, out) / weightAt(cum, in))
	return k.metropolis(rng, st, info, lq)
}

// weightAt is the weight of term j in a row of cumulative weights.
func weightAt(cum []float64, j int) float64 {
	if j == 0 {
		return cum[0]
	}
	return cum[j] - cum[j-1]
}

// swapRow returns the Gibbs distribution of slot r of st's model, from
// the cache or computed.
func (k *CollapsedKernel) swapRow(st *CollapsedState, r int) *swapRow {
	out := st.Active[r]
	k.setKey(st.Active, out)
	if row, ok := k.rows.m[string(k.key)]; ok {
		return row
	}
	row := k.rows.put(k.key)
	le := k.row
	k.cur.sc.Swaps(r, le)
	n := len(st.Active)
	top := math.Inf(-1)
	m := 0
	for j, v := range le {
		if m < n && st.Active[m] == j {
			m++
			if j != out {
				le[j] = math.Inf(-1)
				continue
			}
		}
		top = math.Max(top, v)
	}
	var sum float64
	for j, v := range le {
		// Weights below 2⁻⁶⁰ of the largest do not change the sum.
		if d := v - top; d > -60*math.Ln2 {
			sum += math.Exp(d)
		}
		row.cum[j] = sum
	}
	return row
}

func (k *CollapsedKernel) flipTo(st *CollapsedState, j int, info *SelectionInfo) {
	info.Term = j
	if _, in := slices.BinarySearch(st.Active, j); in {
		info.Move = MoveDrop
		k.next = slices.DeleteFunc(append(k.next[:0], st.Active...), func(a int) bool { return a == j })
		return
	}
	info.Move = MoveAdd
	k.next = insertSorted(append(k.next[:0], st.Active...), j)
}

func (k *CollapsedKernel) swapTo(st *CollapsedState, out, in int, info *SelectionInfo) {
	info.Move, info.Term, info.Out = MoveSwap, in, out
	k.next = k.next[:0]
	for _, a := range st.Active {
		if a != out {
			k.next = append(k.next, a)
		}
	}
	k.next = insertSorted(k.next, in)
}

// Conditionals writes into dst (length P) each term's conditional
// inclusion probability P(γ_j = 1 | γ_−j, y) at st's model, from the
// exact evidences of its flip neighbours: the terms of a Rao-Blackwellised
// estimate of the inclusion probabilities.
func (k *CollapsedKernel) Conditionals(st *CollapsedState, dst []float64) {
	k.flipWeights(k.cur, st.Active)
	fl := k.cur.fl
	n := len(st.Active)
	r := 0
	for j, lr := range fl.lw {
		in := r < n && st.Active[r] == j
		if in {
			r++
		}
		// The flipped model's probability against the pair of them,
		// t/(1+t) with t = e^lr: Barker's weight itself.
		other := fl.w[j]
		if k.set.Balancing != BalanceBarker {
			other = 0.0
			if !math.IsInf(lr, -1) {
				other = 1 / (1 + math.Exp(-lr))
			}
		}
		if in {
			dst[j] = 1 - other
		} else {
			dst[j] = other
		}
	}
}

// Draw writes into theta a draw from the posterior of the parameters of
// st's model (the kernel's current model).
func (k *CollapsedKernel) Draw(rng *rand.Rand, theta []float64) error {
	return k.cur.sc.Draw(rng, theta)
}
