package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// SelectionModel is one model of a variable selection as SelectionKernel
// sees it: a log-density on R^Dim whose coordinates are laid out as
// (always-in, one per active term in increasing term index, shared), and
// the transports that carry it to the standard normal.
type SelectionModel interface {
	// Dim is the unconstrained dimension.
	Dim() int
	// LogDensity returns log π_γ(θ), normalised so that its integral is
	// the model's evidence.
	LogDensity(theta []float64) (float64, error)
	// Transport carries the model's posterior to the reference for the
	// jumps between models. It is either of dimension Dim, or of the
	// saturated space's (see SelectionKernel): then the model's Proposal
	// must be too, and so must every model's.
	Transport() Transport
	// Proposal is a transport whose inverse pushes N(0, I) forward to the
	// within-model independence proposal (and whose reference coordinates
	// the within-model random walk moves in).
	Proposal() Transport
	// LogEvidence approximates log ∫ π_γ, or is NaN when no approximation
	// is available; informed proposals weigh neighbours by it.
	LogEvidence() float64
}

// SelectionTarget is a variable selection's space of 2^P models, each
// given by its active terms as a strictly increasing list of indices in
// [0, P). It builds (and may cache) the models.
type SelectionTarget interface {
	// NumTerms is P.
	NumTerms() int
	// Always is the number of coordinates before the terms' in every
	// model.
	Always() int
	// LogModelPrior returns log p(γ).
	LogModelPrior(active []int) (float64, error)
	// Model returns model γ.
	Model(active []int) (SelectionModel, error)
}

// SelectionEvidence is implemented by a SelectionTarget that knows each
// model's log evidence without building it (a closed form): the informed
// choice then weighs a model's P neighbours by their exact evidences and
// builds only the model it jumps to.
type SelectionEvidence interface {
	// ModelLogEvidence returns log ∫ π_γ of model active (−Inf for a
	// model of no mass).
	ModelLogEvidence(active []int) (float64, error)
}

// SelectionNeighbours is implemented by a SelectionEvidence target that
// computes the log evidences of all P flip neighbours of a model at once,
// faster than one by one: the informed choice then makes one call per
// model it weighs.
type SelectionNeighbours interface {
	// NeighbourLogEvidences writes into le[j] the log evidence of model
	// active with term j flipped (−Inf for a model of no mass) and returns
	// the model's own.
	NeighbourLogEvidences(active []int, le []float64) (float64, error)
}

// SelectionMove names a move of SelectionKernel.
type SelectionMove uint8

// The moves between models: none (a swap proposed where the model has no
// term to swap), add or drop one term, swap one active term for an
// inactive one.
const (
	MoveNone SelectionMove = iota
	MoveAdd
	MoveDrop
	MoveSwap
)

func (m SelectionMove) String() string {
	switch m {
	case MoveNone:
		return "none"
	case MoveAdd:
		return "add"
	case MoveDrop:
		return "drop"
	case MoveSwap:
		return "swap"
	}
	return fmt.Sprintf("SelectionMove(%d)", uint8(m))
}

// SelectionSettings tunes SelectionKernel; zero fields take the defaults.
type SelectionSettings struct {
	// SwapProb is the probability of proposing a swap rather than an
	// add/drop (default 0.5; a negative value disables swaps).
	SwapProb float64
	// Informed chooses the term to add or drop with locally balanced
	// weights √(p(γ')Ẑ(γ')/(p(γ)Ẑ(γ))) from the models' approximate
	// evidences, instead of uniformly. It builds every neighbour of each
	// model visited, unless the target knows their evidences without
	// building them (SelectionEvidence).
	Informed bool
	// Independence is the number of within-model independence
	// Metropolis–Hastings steps from each model's Proposal after every
	// jump (default 1; negative for none).
	Independence int
	// RandomWalk is the number of within-model random-walk steps in the
	// Proposal's reference coordinates (default 1; negative for none), with
	// scale RandomWalkScale/√Dim (default 2.38).
	RandomWalk      int
	RandomWalkScale float64
}

// SelectionState is the state of a selection chain: the active terms, the
// point θ of the model and its log-density.
type SelectionState struct {
	Active     []int
	Theta      []float64
	LogDensity float64 // log π_γ(θ)
	LogPrior   float64 // log p(γ)
	Model      SelectionModel
}

// SelectionInfo reports one step.
type SelectionInfo struct {
	Move SelectionMove
	// Term is the term added or dropped, or swapped in; Out the term
	// swapped out (−1 otherwise).
	Term, Out int
	// Accepted reports whether the jump was accepted and AcceptProb is
	// its acceptance probability.
	Accepted   bool
	AcceptProb float64
	// WithinAccepted counts the accepted within-model steps.
	WithinAccepted, WithinProposed int
}

// SelectionKernel is the transdimensional kernel over the models of a
// variable selection (MC3's neighbourhood: add, drop or swap one term),
// whose jumps carry the continuous parameters through the models'
// transports: z = T_γ(θ); an added term's coordinate is a fresh N(0, 1)
// auxiliary inserted at its slot, a dropped term's coordinate is removed
// (and becomes the reverse move's auxiliary), a swap moves the coordinate
// from the old term's slot to the new one's; θ' = T_γ'⁻¹(z'). The
// acceptance probability is
//
//	min{1, p(γ')π_γ'(θ') |det J_T_γ(θ)| |det J_T_γ'⁻¹(z')| q / (p(γ)π_γ(θ))}
//
// with q the ratio of auxiliary densities (1/φ(u) for an add, φ(u) for a
// drop) and of the proposal probabilities of the informed choice. Each
// step ends with the within-model moves. A kernel keeps scratch space: one
// per chain.
//
// When the models' transports are of the saturated space, of dimension
// always-in + P + shared (the coordinates of every term in term order,
// those of the terms a model lacks being N(0, 1) auxiliaries: the
// conditional transports of the paper's CTRJ, Algorithm 2), a jump draws
// the auxiliaries u of the current model's missing terms, maps ξ = (θ, u)
// through both transports, ξ' = T_γ'⁻¹(T_γ(ξ)), and splits ξ' into the new
// model's θ' and auxiliaries u'; q is then φ(u')/φ(u). The within-model
// moves first redraw the auxiliaries (a Gibbs step of the augmented
// target) and then move (θ, u) jointly in the reference coordinates.
type SelectionKernel struct {
	target SelectionTarget
	set    SelectionSettings
	p      int
	z, z2  []float64
	theta  []float64
	// xi, xi2: points of the saturated space (saturated transports only).
	xi, xi2 []float64
	w       []float64
	// next holds the proposed model's terms; it trades places with the
	// state's on acceptance, so a step allocates no term list.
	next []int
	// informed: the normalising sums of the neighbour weights, by model,
	// and the model whose weights w holds (a chain that stays in a model
	// weighs its neighbours once).
	wsum   map[string]float64
	wkey   string
	keyBuf []byte
	// evidence is the target's ModelLogEvidence, or nil; neighbours its
	// NeighbourLogEvidences, or nil, with le their buffer.
	evidence   func(active []int) (float64, error)
	neighbours func(active []int, le []float64) (float64, error)
	le         []float64
}

// NewSelectionKernel returns the kernel over target's models.
func NewSelectionKernel(target SelectionTarget, s *SelectionSettings) (*SelectionKernel, error) {
	if target == nil {
		return nil, errors.New("kernels: nil selection target")
	}
	p := target.NumTerms()
	if p < 1 {
		return nil, fmt.Errorf("kernels: a selection needs at least one term, got %d", p)
	}
	var set SelectionSettings
	if s != nil {
		set = *s
	}
	if set.SwapProb == 0 {
		set.SwapProb = 0.5
	}
	if set.SwapProb < 0 {
		set.SwapProb = 0
	}
	if set.SwapProb >= 1 || math.IsNaN(set.SwapProb) {
		return nil, fmt.Errorf("kernels: swap probability %v, want below 1", set.SwapProb)
	}
	if set.Independence == 0 {
		set.Independence = 1
	}
	if set.RandomWalk == 0 {
		set.RandomWalk = 1
	}
	if set.RandomWalkScale == 0 {
		set.RandomWalkScale = 2.38
	}
	if !(set.RandomWalkScale > 0) || math.IsInf(set.RandomWalkScale, 1) {
		return nil, fmt.Errorf("kernels: random-walk scale %v", set.RandomWalkScale)
	}
	k := &SelectionKernel{target: target, set: set, p: p, wsum: map[string]float64{}}
	if e, ok := target.(SelectionEvidence); ok {
		k.evidence = e.ModelLogEvidence
		if nb, ok := target.(SelectionNeighbours); ok {
			k.neighbours, k.le = nb.NeighbourLogEvidences, make([]float64, p)
		}
	}
	return k, nil
}

// Init returns the state at model active and point theta (nil: the
// proposal's centre, the inverse transport of z = 0).
func (k *SelectionKernel) Init(active []int, theta []float64) (*SelectionState, error) {
	active = slices.Clone(active)
	for i, a := range active {
		if a < 0 || a >= k.p || (i > 0 && a <= active[i-1]) {
			return nil, fmt.Errorf("kernels: active terms %v are not strictly increasing indices in [0, %d)", active, k.p)
		}
	}
	m, err := k.target.Model(active)
	if err != nil {
		return nil, err
	}
	lp, err := k.target.LogModelPrior(active)
	if err != nil {
		return nil, err
	}
	st := &SelectionState{Active: active, Model: m, LogPrior: lp}
	if theta == nil {
		st.Theta = make([]float64, m.Dim())
		q := m.Proposal()
		if n := q.Dim(); n != m.Dim() {
			xi := make([]float64, n)
			if _, err := q.Inverse(make([]float64, n), xi); err != nil {
				return nil, err
			}
			k.extract(active, xi, st.Theta)
		} else if _, err := q.Inverse(make([]float64, m.Dim()), st.Theta); err != nil {
			return nil, err
		}
	} else {
		if len(theta) != m.Dim() {
			return nil, fmt.Errorf("kernels: initial point of length %d for a model of dimension %d", len(theta), m.Dim())
		}
		st.Theta = slices.Clone(theta)
	}
	st.LogDensity, err = m.LogDensity(st.Theta)
	if err != nil {
		return nil, err
	}
	if !finite(st.LogDensity) {
		return nil, fmt.Errorf("kernels: the log-density at the initial point is %v", st.LogDensity)
	}
	return st, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func (k *SelectionKernel) grow(n int) {
	if cap(k.z) < n {
		k.z = make([]float64, n)
		k.z2 = make([]float64, n)
		k.theta = make([]float64, n)
		k.xi = make([]float64, n)
		k.xi2 = make([]float64, n)
	}
}

// rank is the number of members of the sorted list a smaller than i.
func rank(a []int, i int) int {
	r, _ := slices.BinarySearch(a, i)
	return r
}

// Step makes one jump proposal and the within-model moves, updating st in
// place. It returns an error only when a model cannot be built or its
// transport fails.
func (k *SelectionKernel) Step(rng *rand.Rand, st *SelectionState) (SelectionInfo, error) {
	info, err := k.jump(rng, st)
	if err != nil {
		return info, err
	}
	a, n, err := k.Within(rng, st)
	info.WithinAccepted, info.WithinProposed = a, n
	return info, err
}

func (k *SelectionKernel) jump(rng *rand.Rand, st *SelectionState) (SelectionInfo, error) {
	info := SelectionInfo{Term: -1, Out: -1}
	A := k.target.Always()
	size := len(st.Active)
	var newActive []int
	logQ := 0.0 // log q(reverse)/q(forward) and auxiliary densities
	if rng.Float64() < k.set.SwapProb {
		if size == 0 || size == k.p {
			return info, nil
		}
		out := st.Active[rng.IntN(size)]
		in := rng.IntN(k.p - size)
		// the in-th inactive term
		for _, a := range st.Active {
			if a <= in {
				in++
			}
		}
		info.Move, info.Term, info.Out = MoveSwap, in, out
		newActive = k.next[:0]
		for _, a := range st.Active {
			if a != out {
				newActive = append(newActive, a)
			}
		}
		newActive = insertSorted(newActive, in)
	} else {
		var j int
		if k.set.Informed {
			var lq float64
			var err error
			j, lq, err = k.informedChoice(rng, st)
			if err != nil {
				return info, err
			}
			logQ += lq
		} else {
			j = rng.IntN(k.p)
		}
		info.Term = j
		if _, in := slices.BinarySearch(st.Active, j); in {
			info.Move = MoveDrop
			newActive = slices.DeleteFunc(append(k.next[:0], st.Active...), func(a int) bool { return a == j })
		} else {
			info.Move = MoveAdd
			newActive = insertSorted(append(k.next[:0], st.Active...), j)
		}
	}
	k.next = newActive
	lp2, err := k.target.LogModelPrior(newActive)
	if err != nil {
		return info, err
	}
	if math.IsInf(lp2, -1) {
		// A model of prior probability zero is never entered, so it is
		// never built: its density may be improper (a g-prior's model
		// with more terms than the data support).
		return info, nil
	}
	m2, err := k.target.Model(newActive)
	if err != nil {
		return info, err
	}
	d, d2 := st.Model.Dim(), m2.Dim()
	if n := st.Model.Transport().Dim(); n != d || m2.Transport().Dim() != d2 {
		return k.saturatedJump(rng, st, m2, lp2, newActive, info, logQ)
	}
	k.grow(max(d, d2))
	z, z2, theta2 := k.z[:d], k.z2[:d2], k.theta[:d2]
	ldF, err := st.Model.Transport().Forward(st.Theta, z)
	if err != nil {
		return info, err
	}
	switch info.Move {
	case MoveAdd:
		s := A + rank(st.Active, info.Term)
		u := rng.NormFloat64()
		copy(z2[:s], z[:s])
		z2[s] = u
		copy(z2[s+1:], z[s:])
		logQ -= logPhi(u)
	case MoveDrop:
		s := A + rank(st.Active, info.Term)
		u := z[s]
		copy(z2[:s], z[:s])
		copy(z2[s:], z[s+1:])
		logQ += logPhi(u)
	case MoveSwap:
		s1 := A + rank(st.Active, info.Out)
		s2 := A + rank(newActive, info.Term)
		v := z[s1]
		tmp := k.z2[:d2]
		// remove s1, then insert v at s2
		copy(tmp[:s1], z[:s1])
		copy(tmp[s1:d-1], z[s1+1:])
		copy(tmp[s2+1:], tmp[s2:d-1])
		tmp[s2] = v
	}
	ldI, err := m2.Transport().Inverse(z2, theta2)
	if err != nil {
		return info, err
	}
	return k.accept(rng, st, m2, lp2, newActive, theta2, ldF, ldI, logQ, info), nil
}

// saturatedJump ends a jump to model m2 (terms newActive, log prior lp2)
// whose transports are of the saturated space.
func (k *SelectionKernel) saturatedJump(rng *rand.Rand, st *SelectionState, m2 SelectionModel, lp2 float64, newActive []int, info SelectionInfo, logQ float64) (SelectionInfo, error) {
	T, T2 := st.Model.Transport(), m2.Transport()
	n := T.Dim()
	if T2.Dim() != n || n != k.saturatedDim(st.Active, st.Model.Dim()) || n != k.saturatedDim(newActive, m2.Dim()) {
		return info, fmt.Errorf("kernels: transports of dimensions %d and %d for models of dimensions %d and %d: not all of the saturated space (%d terms)",
			n, T2.Dim(), st.Model.Dim(), m2.Dim(), k.p)
	}
	k.grow(n)
	xi, xi2, z, theta2 := k.xi[:n], k.xi2[:n], k.z[:n], k.theta[:m2.Dim()]
	logQ -= k.embed(rng, st.Active, st.Theta, xi)
	ldF, err := T.Forward(xi, z)
	if err != nil {
		return info, err
	}
	ldI, err := T2.Inverse(z, xi2)
	if err != nil {
		return info, err
	}
	logQ += k.extract(newActive, xi2, theta2)
	return k.accept(rng, st, m2, lp2, newActive, theta2, ldF, ldI, logQ, info), nil
}

// accept ends a jump to model m2 (terms newActive, log prior lp2) at
// theta2, whose proposal has log Jacobians ldF and ldI (forward and
// inverse transport) and auxiliary-density and choice terms logQ: the
// Metropolis–Hastings test, and the state moved on acceptance.
func (k *SelectionKernel) accept(rng *rand.Rand, st *SelectionState, m2 SelectionModel, lp2 float64, newActive []int, theta2 []float64, ldF, ldI, logQ float64, info SelectionInfo) SelectionInfo {
	ld2, err := m2.LogDensity(theta2)
	if err != nil || !finite(ld2) {
		ld2 = math.Inf(-1)
	}
	logA := lp2 + ld2 - st.LogPrior - st.LogDensity + ldF + ldI + logQ
	if math.IsNaN(logA) {
		logA = math.Inf(-1)
	}
	info.AcceptProb = math.Exp(min(0, logA))
	if logA >= 0 || rng.Float64() < math.Exp(logA) {
		info.Accepted = true
		st.Active, k.next = newActive, st.Active
		st.Model = m2
		st.Theta = append(st.Theta[:0], theta2...)
		st.LogDensity = ld2
		st.LogPrior = lp2
	}
	return info
}

// saturatedDim is the dimension of the saturated space of the model with
// the given terms and dimension.
func (k *SelectionKernel) saturatedDim(active []int, d int) int {
	return d - len(active) + k.p
}

// embed writes the point theta of the model with the given terms into the
// saturated space's xi, the missing terms' coordinates drawn from N(0, 1),
// and returns their log-density.
func (k *SelectionKernel) embed(rng *rand.Rand, active []int, theta, xi []float64) float64 {
	A := k.target.Always()
	copy(xi[:A], theta[:A])
	var lq float64
	r := 0
	for j := range k.p {
		if r < len(active) && active[r] == j {
			xi[A+j] = theta[A+r]
			r++
		} else {
			u := rng.NormFloat64()
			xi[A+j] = u
			lq += logPhi(u)
		}
	}
	copy(xi[A+k.p:], theta[A+len(active):])
	return lq
}

// extract writes the coordinates of the model with the given terms from
// the saturated space's xi into theta and returns the log-density of the
// auxiliaries left over.
func (k *SelectionKernel) extract(active []int, xi, theta []float64) float64 {
	A := k.target.Always()
	copy(theta[:A], xi[:A])
	var lq float64
	r := 0
	for j := range k.p {
		if r < len(active) && active[r] == j {
			theta[A+r] = xi[A+j]
			r++
		} else {
			lq += logPhi(xi[A+j])
		}
	}
	copy(theta[A+len(active):], xi[A+k.p:])
	return lq
}

// informedChoice draws the term to flip with probability ∝ the locally
// balanced weight of its neighbour and returns log q(γ|γ')/q(γ'|γ).
func (k *SelectionKernel) informedChoice(rng *rand.Rand, st *SelectionState) (int, float64, error) {
	sum, err := k.neighbourWeights(st.Active, true)
	if err != nil {
		return 0, 0, err
	}
	u := rng.Float64() * sum
	j := k.p - 1
	for i, w := range k.w[:k.p] {
		if u < w {
			j = i
			break
		}
		u -= w
	}
	wj := k.w[j]
	var next []int
	if _, in := slices.BinarySearch(st.Active, j); in {
		next = slices.DeleteFunc(slices.Clone(st.Active), func(a int) bool { return a == j })
	} else {
		next = insertSorted(slices.Clone(st.Active), j)
	}
	sum2, err := k.neighbourWeights(next, false)
	if err != nil {
		return 0, 0, err
	}
	// The reverse weight is 1/wj (the balancing function √r is
	// symmetric: g(1/r) = g(r)/r).
	return j, math.Log(1/wj/sum2) - math.Log(wj/sum), nil
}

// neighbourWeights returns the sum of the flip neighbours' weights of
// model active, and writes them into k.w when keep is set.
func (k *SelectionKernel) neighbourWeights(active []int, keep bool) (float64, error) {
	// The key is built in a reused buffer: looking it up allocates
	// nothing, only storing a new one does.
	k.keyBuf = k.keyBuf[:0]
	for _, a := range active {
		k.keyBuf = strconv.AppendInt(append(k.keyBuf, ','), int64(a), 10)
	}
	if s, ok := k.wsum[string(k.keyBuf)]; ok && (!keep || string(k.keyBuf) == k.wkey) {
		return s, nil // k.w holds the weights of k.wkey's model
	}
	evidence := k.evidence
	if evidence == nil {
		evidence = func(active []int) (float64, error) {
			m, err := k.target.Model(active)
			if err != nil {
				return math.NaN(), err
			}
			return m.LogEvidence(), nil
		}
	}
	var le float64
	var err error
	if k.neighbours != nil {
		le, err = k.neighbours(active, k.le)
	} else {
		le, err = evidence(active)
	}
	if err != nil {
		return 0, err
	}
	lp, err := k.target.LogModelPrior(active)
	if err != nil {
		return 0, err
	}
	base := lp + le
	if cap(k.w) < k.p {
		k.w = make([]float64, k.p)
	}
	w := k.w[:k.p]
	var sum float64
	nb := make([]int, 0, len(active)+1)
	for j := range k.p {
		nb = nb[:0]
		if _, in := slices.BinarySearch(active, j); in {
			for _, a := range active {
				if a != j {
					nb = append(nb, a)
				}
			}
		} else {
			nb = insertSorted(append(nb, active...), j)
		}
		lpj, err := k.target.LogModelPrior(nb)
		if err != nil {
			return 0, err
		}
		if math.IsInf(lpj, -1) { // never proposed, never built
			w[j] = 0
			continue
		}
		var lej float64
		if k.neighbours != nil {
			lej = k.le[j]
		} else if lej, err = evidence(nb); err != nil {
			return 0, err
		}
		r := lpj + lej - base
		// Without evidences the choice is uniform; weights are clamped
		// (symmetrically, so that the reverse weight stays 1/w) so that no
		// neighbour is starved.
		switch {
		case math.IsNaN(r):
			r = 0
		case math.IsInf(r, 0):
			r = math.Copysign(80, r)
		}
		w[j] = math.Exp(math.Max(-40, math.Min(40, r/2)))
		sum += w[j]
	}
	if len(k.wsum) > 1<<16 {
		clear(k.wsum)
	}
	key := string(k.keyBuf)
	k.wsum[key] = sum
	k.wkey = key // k.w now holds this model's weights
	return sum, nil
}

func insertSorted(a []int, v int) []int {
	i, _ := slices.BinarySearch(a, v)
	return slices.Insert(a, i, v)
}

func logPhi(u float64) float64 { return -0.5*u*u - 0.5*math.Log(2*math.Pi) }

// Within runs the within-model moves on st: independence MH steps from
// the model's Proposal, then random-walk steps in its reference
// coordinates. It returns the accepted and proposed counts.
func (k *SelectionKernel) Within(rng *rand.Rand, st *SelectionState) (int, int, error) {
	m := st.Model
	d := m.Dim()
	q := m.Proposal()
	if q.Dim() != d {
		return k.saturatedWithin(rng, st)
	}
	k.grow(d)
	z, z2, theta2 := k.z[:d], k.z2[:d], k.theta[:d]
	acc, prop := 0, 0
	for range max(0, k.set.Independence) {
		// log w(θ) = log π(θ) − log q(θ), log q(θ) = log φ(T(θ)) + log|J_T(θ)|
		ld, err := q.Forward(st.Theta, z)
		if err != nil {
			return acc, prop, err
		}
		logW := st.LogDensity - sumLogPhi(z) - ld
		for i := range z2 {
			z2[i] = rng.NormFloat64()
		}
		ldInv, err := q.Inverse(z2, theta2)
		if err != nil {
			return acc, prop, err
		}
		ld2, err := m.LogDensity(theta2)
		if err != nil || !finite(ld2) {
			ld2 = math.Inf(-1)
		}
		logW2 := ld2 - sumLogPhi(z2) + ldInv
		prop++
		if a := logW2 - logW; a >= 0 || rng.Float64() < math.Exp(a) {
			copy(st.Theta, theta2)
			st.LogDensity = ld2
			acc++
		}
	}
	scale := k.set.RandomWalkScale / math.Sqrt(float64(d))
	for range max(0, k.set.RandomWalk) {
		ldF, err := q.Forward(st.Theta, z)
		if err != nil {
			return acc, prop, err
		}
		ldCur := -ldF // log|J_T⁻¹(z)|
		for i := range z2 {
			z2[i] = z[i] + scale*rng.NormFloat64()
		}
		ldInv, err := q.Inverse(z2, theta2)
		if err != nil {
			return acc, prop, err
		}
		ld2, err := m.LogDensity(theta2)
		if err != nil || !finite(ld2) {
			ld2 = math.Inf(-1)
		}
		prop++
		if a := ld2 + ldInv - st.LogDensity - ldCur; a >= 0 || rng.Float64() < math.Exp(a) {
			copy(st.Theta, theta2)
			st.LogDensity = ld2
			acc++
		}
	}
	return acc, prop, nil
}

func sumLogPhi(z []float64) float64 {
	var s float64
	for _, v := range z {
		s += v * v
	}
	return -0.5*s - 0.5*float64(len(z))*math.Log(2*math.Pi)
}

// saturatedWithin is Within for a model whose Proposal is a transport of
// the saturated space: the auxiliaries u of the missing terms are redrawn,
// then independence and random-walk steps move ξ = (θ, u) under the
// augmented target π(θ)φ(u).
func (k *SelectionKernel) saturatedWithin(rng *rand.Rand, st *SelectionState) (int, int, error) {
	m := st.Model
	q := m.Proposal()
	n := q.Dim()
	if n != k.saturatedDim(st.Active, m.Dim()) {
		return 0, 0, fmt.Errorf("kernels: within-model transport of dimension %d for a model of dimension %d with %d of %d terms", n, m.Dim(), len(st.Active), k.p)
	}
	k.grow(n)
	xi, xi2, z, z2, theta2 := k.xi[:n], k.xi2[:n], k.z[:n], k.z2[:n], k.theta[:m.Dim()]
	lu := k.embed(rng, st.Active, st.Theta, xi)
	acc, prop := 0, 0
	for range max(0, k.set.Independence) {
		ld, err := q.Forward(xi, z)
		if err != nil {
			return acc, prop, err
		}
		logW := st.LogDensity + lu - sumLogPhi(z) - ld
		for i := range z2 {
			z2[i] = rng.NormFloat64()
		}
		ldInv, err := q.Inverse(z2, xi2)
		if err != nil {
			return acc, prop, err
		}
		lu2 := k.extract(st.Active, xi2, theta2)
		ld2, err := m.LogDensity(theta2)
		if err != nil || !finite(ld2) {
			ld2 = math.Inf(-1)
		}
		logW2 := ld2 + lu2 - sumLogPhi(z2) + ldInv
		prop++
		if a := logW2 - logW; a >= 0 || rng.Float64() < math.Exp(a) {
			copy(st.Theta, theta2)
			copy(xi, xi2)
			st.LogDensity, lu = ld2, lu2
			acc++
		}
	}
	scale := k.set.RandomWalkScale / math.Sqrt(float64(n))
	for range max(0, k.set.RandomWalk) {
		ldF, err := q.Forward(xi, z)
		if err != nil {
			return acc, prop, err
		}
		for i := range z2 {
			z2[i] = z[i] + scale*rng.NormFloat64()
		}
		ldInv, err := q.Inverse(z2, xi2)
		if err != nil {
			return acc, prop, err
		}
		lu2 := k.extract(st.Active, xi2, theta2)
		ld2, err := m.LogDensity(theta2)
		if err != nil || !finite(ld2) {
			ld2 = math.Inf(-1)
		}
		prop++
		if a := ld2 + lu2 + ldInv - st.LogDensity - lu + ldF; a >= 0 || rng.Float64() < math.Exp(a) {
			copy(st.Theta, theta2)
			copy(xi, xi2)
			st.LogDensity, lu = ld2, lu2
			acc++
		}
	}
	return acc, prop, nil
}
