package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultMaxTreeDepth is Stan's default limit on NUTS tree depth: at most
// 2^10 − 1 leapfrog steps per transition.
const DefaultMaxTreeDepth = 10

// DefaultMaxEnergyError is Stan's threshold on the energy error above which
// a leapfrog step is declared divergent.
const DefaultMaxEnergyError = 1000

// NUTSState is the state of a NUTS chain: a position with its log-density
// and gradient, so that a transition need not re-evaluate the start point.
type NUTSState struct {
	Position   []float64
	LogDensity float64
	Grad       []float64
}

// NUTSInfo records what one NUTS transition did, with the meaning of Stan's
// sampler diagnostics.
type NUTSInfo struct {
	// AcceptProb is the mean Metropolis acceptance probability over every
	// point of the trajectory (Stan's accept_stat__); step-size adaptation
	// drives it to the target.
	AcceptProb float64
	// Divergent reports an energy error above MaxEnergyError, or a
	// non-finite log-density, somewhere on the trajectory.
	Divergent bool
	// TreeDepth is the depth of the final trajectory tree.
	TreeDepth int
	// NumLeapfrog is the number of leapfrog steps, which equals the number
	// of gradient evaluations.
	NumLeapfrog int
	// Energy is the Hamiltonian at the selected point (Stan's energy__).
	Energy float64
	// StepSize is the leapfrog step size used.
	StepSize float64
}

// NUTS is the No-U-Turn sampler with multinomial sampling along the
// trajectory and the generalized no-U-turn criterion (Betancourt 2017), as
// in Stan. Its exported fields are its parameters; change them between
// steps freely. A NUTS value owns scratch space, so it serves one chain.
type NUTS struct {
	// StepSize is the leapfrog step size ε > 0. With a step size that is
	// not positive and finite, or a negative MaxTreeDepth, Step does not
	// move and reports a divergence (see Validate).
	StepSize float64
	// Metric is the inverse mass matrix.
	Metric *Metric
	// MaxTreeDepth bounds the tree depth; 0 means DefaultMaxTreeDepth.
	MaxTreeDepth int
	// MaxEnergyError is the divergence threshold; 0 means
	// DefaultMaxEnergyError.
	MaxEnergyError float64

	target Target
	dim    int

	fwd, bck point
	// sample is the transition's current choice and propose the new
	// subtree's; choosing swaps them rather than copying.
	sample, propose proposal
	// rho sums the momenta of the whole trajectory; rhoFwd and rhoBck
	// those of its forward and backward parts.
	rho, rhoFwd, rhoBck []float64
	// Momenta p and velocities M⁻¹p at the four inner and outer ends.
	pFwdFwd, pFwdBck, pBckFwd, pBckBck []float64
	vFwdFwd, vFwdBck, vBckFwd, vBckBck []float64
	levels                             []treeLevel
	nLeapfrog                          int
	sumMetroProb                       float64
	divergent                          bool
	maxDeltaH                          float64
}

// point is a phase-space point with everything a tree needs from it.
type point struct {
	q, p, g, v []float64 // position, momentum, gradient, velocity M⁻¹p
	lp         float64
}

func newPoint(n int) point {
	b := make([]float64, 4*n)
	return point{q: b[:n:n], p: b[n : 2*n : 2*n], g: b[2*n : 3*n : 3*n], v: b[3*n:]}
}

// proposal is what a transition keeps of a candidate point: its position,
// gradient, log-density and Hamiltonian. Leaving out the momentum and
// velocity halves the copy each leapfrog step makes.
type proposal struct {
	q, g  []float64
	lp, h float64
}

func newProposal(n int) proposal {
	b := make([]float64, 2*n)
	return proposal{q: b[:n:n], g: b[n:]}
}

// set makes c the point z with Hamiltonian h.
func (c *proposal) set(z *point, h float64) {
	copy(c.q, z.q)
	copy(c.g, z.g)
	c.lp, c.h = z.lp, h
}

// hamiltonian returns −log p(q) + ½pᵀM⁻¹p, +Inf where it is not finite.
func (z *point) hamiltonian() float64 {
	h := -z.lp + 0.5*dot(z.p, z.v)
	if math.IsNaN(h) {
		return math.Inf(1)
	}
	return h
}

// treeLevel is the scratch one level of the recursive tree builder needs
// while it joins its two half-trees.
type treeLevel struct {
	pInitEnd, vInitEnd, rhoInit    []float64
	pFinalBeg, vFinalBeg, rhoFinal []float64
	proposeFinal                   proposal
}

// NewNUTS returns a NUTS kernel for t with step size stepSize and metric m;
// a nil m means the unit metric.
func NewNUTS(t Target, stepSize float64, m *Metric) (*NUTS, error) {
	n, err := checkKernelArgs(t, "step size", stepSize)
	if err != nil {
		return nil, err
	}
	if m == nil {
		m, _ = NewUnitMetric(n)
	}
	if m.Dim() != n {
		return nil, fmt.Errorf("%w: metric has dimension %d, target %d", ErrDimension, m.Dim(), n)
	}
	k := &NUTS{StepSize: stepSize, Metric: m, target: t, dim: n}
	k.fwd, k.bck = newPoint(n), newPoint(n)
	k.sample, k.propose = newProposal(n), newProposal(n)
	vs := make([][]float64, 11)
	buf := make([]float64, 11*n)
	for i := range vs {
		vs[i] = buf[i*n : (i+1)*n : (i+1)*n]
	}
	k.rho, k.rhoFwd, k.rhoBck = vs[0], vs[1], vs[2]
	k.pFwdFwd, k.pFwdBck, k.pBckFwd, k.pBckBck = vs[3], vs[4], vs[5], vs[6]
	k.vFwdFwd, k.vFwdBck, k.vBckFwd, k.vBckBck = vs[7], vs[8], vs[9], vs[10]
	return k, nil
}

// Target returns the kernel's target.
func (k *NUTS) Target() Target { return k.target }

// Init returns a state at a copy of x, evaluating the log-density and
// gradient there. It fails if they are not finite.
func (k *NUTS) Init(x []float64) (NUTSState, error) {
	if len(x) != k.dim {
		return NUTSState{}, fmt.Errorf("%w: position has length %d, target dimension %d", ErrDimension, len(x), k.dim)
	}
	s := NUTSState{Position: append([]float64(nil), x...), Grad: make([]float64, k.dim)}
	s.LogDensity = evalGrad(k.target, s.Position, s.Grad)
	if math.IsInf(s.LogDensity, -1) {
		return NUTSState{}, initialPointError(k.target, s.Position, s.Grad, true)
	}
	return s, nil
}

// Validate reports settings Step cannot run with: a step size that is not
// positive and finite, or a negative MaxTreeDepth.
func (k *NUTS) Validate() error {
	switch {
	case !(k.StepSize > 0) || math.IsInf(k.StepSize, 1):
		return fmt.Errorf("kernels: NUTS step size %v, want positive and finite", k.StepSize)
	case k.MaxTreeDepth < 0:
		return fmt.Errorf("kernels: NUTS maximum tree depth %d, want positive (0 means %d)", k.MaxTreeDepth, DefaultMaxTreeDepth)
	}
	return nil
}

// ensureLevels sizes the per-level scratch for the current MaxTreeDepth;
// it allocates only when the depth grows.
func (k *NUTS) ensureLevels(depth int) {
	for len(k.levels) < depth {
		n := k.dim
		buf := make([]float64, 6*n)
		v := func(i int) []float64 { return buf[i*n : (i+1)*n : (i+1)*n] }
		k.levels = append(k.levels, treeLevel{
			pInitEnd: v(0), vInitEnd: v(1), rhoInit: v(2),
			pFinalBeg: v(3), vFinalBeg: v(4), rhoFinal: v(5),
			proposeFinal: newProposal(n),
		})
	}
}

// Step runs one NUTS transition from s. It writes the new position and
// gradient into s's slices and returns the updated state, so s must not
// be used afterwards except through the returned value. Step does not
// allocate once the kernel has run at its current MaxTreeDepth.
func (k *NUTS) Step(rng *rand.Rand, s NUTSState) (NUTSState, NUTSInfo) {
	if k.Validate() != nil {
		return s, NUTSInfo{StepSize: k.StepSize, Divergent: true}
	}
	maxDepth := k.MaxTreeDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxTreeDepth
	}
	k.maxDeltaH = k.MaxEnergyError
	if k.maxDeltaH <= 0 {
		k.maxDeltaH = DefaultMaxEnergyError
	}
	k.ensureLevels(maxDepth)
	eps := k.StepSize

	// Start both ends of the trajectory at s with a fresh momentum.
	f := &k.fwd
	h0 := k.startAt(rng, f, s)
	k.sample.set(f, h0)
	k.startEnds()
	logSumWeight := 0.0
	k.nLeapfrog, k.sumMetroProb, k.divergent = 0, 0, false

	depth := 0
	for depth < maxDepth {
		var logSumWeightSub float64
		var valid bool
		if rng.Float64() > 0.5 {
			// Extend forward: the old trajectory becomes the backward
			// part, so its forward end is the backward part's forward
			// end.
			copy(k.rhoBck, k.rho)
			copy(k.pBckFwd, k.pFwdFwd)
			copy(k.vBckFwd, k.vFwdFwd)
			logSumWeightSub, valid = k.buildTree(rng, depth, &k.fwd, &k.propose,
				k.vFwdBck, k.vFwdFwd, k.rhoFwd, k.pFwdBck, k.pFwdFwd, h0, eps)
		} else {
			// Extend backward: the old trajectory becomes the forward
			// part, with its backward end.
			copy(k.rhoFwd, k.rho)
			copy(k.pFwdBck, k.pBckBck)
			copy(k.vFwdBck, k.vBckBck)
			logSumWeightSub, valid = k.buildTree(rng, depth, &k.bck, &k.propose,
				k.vBckFwd, k.vBckBck, k.rhoBck, k.pBckFwd, k.pBckBck, h0, -eps)
		}
		if !valid {
			break
		}
		depth++

		// Biased progressive sampling favours the new subtree, which
		// moves the sample further from the start.
		// The proposal's old contents are dead once chosen or not, so
		// choosing it is a swap.
		if logSumWeightSub > logSumWeight {
			k.sample, k.propose = k.propose, k.sample
		} else if rng.Float64() < math.Exp(logSumWeightSub-logSumWeight) {
			k.sample, k.propose = k.propose, k.sample
		}
		logSumWeight = logAddExp(logSumWeight, logSumWeightSub)

		if !joinFree(k.rho, k.rhoBck, k.rhoFwd, k.vBckBck, k.vFwdFwd,
			k.vBckFwd, k.pBckFwd, k.vFwdBck, k.pFwdBck) {
			break
		}
	}

	copy(s.Position, k.sample.q)
	copy(s.Grad, k.sample.g)
	s.LogDensity = k.sample.lp
	info := NUTSInfo{
		AcceptProb:  k.sumMetroProb / float64(max(k.nLeapfrog, 1)),
		Divergent:   k.divergent,
		TreeDepth:   depth,
		NumLeapfrog: k.nLeapfrog,
		Energy:      k.sample.h,
		StepSize:    eps,
	}
	return s, info
}

// startEnds makes the one-point trajectory at k.fwd: the backward end, the
// momentum sum and the momenta and velocities at all four ends are its
// own. One pass writes them all, cheaper than a copy each for small models.
func (k *NUTS) startEnds() {
	f, b := &k.fwd, &k.bck
	n := len(f.p)
	fq, fg, fv := f.q[:n], f.g[:n], f.v[:n]
	bq, bg, bp, bv := b.q[:n], b.g[:n], b.p[:n], b.v[:n]
	pFF, pFB, pBF, pBB, rho := k.pFwdFwd[:n], k.pFwdBck[:n], k.pBckFwd[:n], k.pBckBck[:n], k.rho[:n]
	vFF, vFB, vBF, vBB := k.vFwdFwd[:n], k.vFwdBck[:n], k.vBckFwd[:n], k.vBckBck[:n]
	for i, p := range f.p {
		v := fv[i]
		bq[i], bg[i], bp[i], bv[i] = fq[i], fg[i], p, v
		pFF[i], pFB[i], pBF[i], pBB[i], rho[i] = p, p, p, p, p
		vFF[i], vFB[i], vBF[i], vBB[i] = v, v, v, v
	}
	b.lp = f.lp
}

// buildTree extends the trajectory from z by 2^depth leapfrog steps of
// signed size eps, choosing a multinomial proposal among the new points.
// vBeg/pBeg receive the velocity and momentum at the subtree's end nearest
// the old trajectory, vEnd/pEnd at its far end, and rho the sum of its
// momenta. It returns the log of the subtree's summed weights, and false
// when the subtree diverged or contains a U-turn.
func (k *NUTS) buildTree(rng *rand.Rand, depth int, z *point, propose *proposal,
	vBeg, vEnd, rho, pBeg, pEnd []float64, h0, eps float64) (float64, bool) {
	if depth == 0 {
		w, ok := k.leaf(z, propose, h0, eps)
		copy(vBeg, z.v)
		copy(vEnd, z.v)
		copy(rho, z.p)
		copy(pBeg, z.p)
		copy(pEnd, z.p)
		return w, ok
	}

	var logSumWeightInit, logSumWeightFinal float64
	var ok bool
	lv := &k.levels[depth]
	// The momenta and velocities at the sides of the join, and the
	// halves' momentum sums.
	rhoInit, rhoFinal := lv.rhoInit, lv.rhoFinal
	vInitEnd, pInitEnd, vFinalBeg, pFinalBeg := lv.vInitEnd, lv.pInitEnd, lv.vFinalBeg, lv.pFinalBeg
	if depth == 1 {
		// Two single points: each is its own sum and both its ends, so
		// they are stored once, straight where the caller wants them.
		if logSumWeightInit, ok = k.leaf(z, propose, h0, eps); !ok {
			return 0, false
		}
		copy(vBeg, z.v)
		copy(pBeg, z.p)
		if logSumWeightFinal, ok = k.leaf(z, &lv.proposeFinal, h0, eps); !ok {
			return 0, false
		}
		copy(vEnd, z.v)
		copy(pEnd, z.p)
		rhoInit, rhoFinal = pBeg, pEnd
		vInitEnd, pInitEnd, vFinalBeg, pFinalBeg = vBeg, pBeg, vEnd, pEnd
	} else {
		if logSumWeightInit, ok = k.buildTree(rng, depth-1, z, propose, vBeg, vInitEnd, rhoInit, pBeg, pInitEnd, h0, eps); !ok {
			return 0, false
		}
		if logSumWeightFinal, ok = k.buildTree(rng, depth-1, z, &lv.proposeFinal, vFinalBeg, vEnd, rhoFinal, pFinalBeg, pEnd, h0, eps); !ok {
			return 0, false
		}
	}

	// Within a subtree the proposal is multinomial (unbiased).
	logSumWeightSub := logAddExp(logSumWeightInit, logSumWeightFinal)
	if logSumWeightFinal > logSumWeightSub {
		*propose, lv.proposeFinal = lv.proposeFinal, *propose
	} else if rng.Float64() < math.Exp(logSumWeightFinal-logSumWeightSub) {
		*propose, lv.proposeFinal = lv.proposeFinal, *propose
	}
	return logSumWeightSub, joinFree(rho, rhoInit, rhoFinal, vBeg, vEnd, vInitEnd, pInitEnd, vFinalBeg, pFinalBeg)
}

// leaf takes one leapfrog step from z, records its acceptance statistics
// and makes it the proposal. It returns the point's log weight, and false
// when the step diverged.
func (k *NUTS) leaf(z *point, propose *proposal, h0, eps float64) (float64, bool) {
	h := k.leapfrog(z, eps)
	k.nLeapfrog++
	if h-h0 > k.maxDeltaH {
		k.divergent = true
	}
	if h0-h > 0 {
		k.sumMetroProb++
	} else {
		k.sumMetroProb += math.Exp(h0 - h)
	}
	propose.set(z, h)
	return h0 - h, !k.divergent
}

// joinFree sets rho to the summed momenta of two adjacent runs, init then
// final, and applies the no-U-turn criterion to the joined run and, as Stan does
// since 2.26, to each run extended by the other's nearest point, which
// catches U-turns the two halves hide from each other. vBeg and vEnd are
// the velocities at the joined run's ends; vInitEnd, pInitEnd and
// vFinalBeg, pFinalBeg those at the two sides of the join. One pass
// computes all six inner products, each summed in index order as dot
// would, so the outcome is that of the separate checks.
func joinFree(rho, rhoInit, rhoFinal, vBeg, vEnd, vInitEnd, pInitEnd, vFinalBeg, pFinalBeg []float64) bool {
	n := len(rho)
	rhoInit, rhoFinal = rhoInit[:n], rhoFinal[:n]
	vBeg, vEnd, vInitEnd, pInitEnd = vBeg[:n], vEnd[:n], vInitEnd[:n], pInitEnd[:n]
	vFinalBeg, pFinalBeg = vFinalBeg[:n], pFinalBeg[:n]
	var a1, a2, b1, b2, c1, c2 float64
	for i := range rho {
		ri, rf := rhoInit[i], rhoFinal[i]
		sub := ri + rf
		rho[i] = sub
		a1 += vBeg[i] * sub
		a2 += vEnd[i] * sub
		e := ri + pFinalBeg[i]
		b1 += vBeg[i] * e
		b2 += vFinalBeg[i] * e
		e = rf + pInitEnd[i]
		c1 += vInitEnd[i] * e
		c2 += vEnd[i] * e
	}
	return a1 > 0 && a2 > 0 && b1 > 0 && b2 > 0 && c1 > 0 && c2 > 0
}

// leapfrog advances z by one leapfrog step of signed size eps and returns
// the Hamiltonian there, as z.hamiltonian would.
func (k *NUTS) leapfrog(z *point, eps float64) float64 {
	half := 0.5 * eps
	k.Metric.kickDrift(z.p, z.g, z.v, z.q, half, eps)
	z.lp = evalGrad(k.target, z.q, z.g)
	if math.IsInf(z.lp, -1) {
		// The Hamiltonian is +Inf and the step counts as divergent;
		// the momentum no longer matters.
		return math.Inf(1)
	}
	h := -z.lp + 0.5*k.Metric.kick(z.p, z.g, z.v, half)
	if math.IsNaN(h) {
		return math.Inf(1)
	}
	return h
}

// startAt sets z to the state s with a fresh momentum and returns its
// Hamiltonian.
func (k *NUTS) startAt(rng *rand.Rand, z *point, s NUTSState) float64 {
	copy(z.q, s.Position)
	copy(z.g, s.Grad)
	z.lp = s.LogDensity
	k.Metric.sampleMomentum(rng, z.p)
	k.Metric.velocity(z.p, z.v)
	return z.hamiltonian()
}

// findStepSize is Stan's initial step-size heuristic: from s, double or
// halve the step size until one leapfrog step's acceptance probability
// crosses 0.8. It sets k.StepSize and counts gradient evaluations.
func (k *NUTS) findStepSize(rng *rand.Rand, s NUTSState) (evals int, err error) {
	z := &k.fwd
	eps := k.StepSize
	deltaH := func() float64 {
		h0 := k.startAt(rng, z, s)
		h := k.leapfrog(z, eps)
		evals++
		return h0 - h
	}
	logTarget := math.Log(0.8)
	dir := -1.0
	if deltaH() > logTarget {
		dir = 1
	}
	for {
		d := deltaH()
		if dir == 1 && !(d > logTarget) || dir == -1 && !(d < logTarget) {
			break
		}
		if dir == 1 {
			eps *= 2
		} else {
			eps /= 2
		}
		if eps > 1e7 {
			return evals, errors.New("kernels: step size search diverged to infinity; the posterior may be improper")
		}
		if eps == 0 {
			return evals, errors.New("kernels: step size search collapsed to zero; the log-density or its gradient may be wrong")
		}
	}
	k.StepSize = eps
	return evals, nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// logAddExp returns log(eᵃ + eᵇ) without overflow.
func logAddExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a > b {
		return a + math.Log1p(math.Exp(b-a))
	}
	return b + math.Log1p(math.Exp(a-b))
}
