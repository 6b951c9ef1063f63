package posteriordb

import (
	"math"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// HMMDrive0 is posteriordb's bball_drive_event_0-hmm_drive_0: a two-state
// hidden Markov model of a basketball player's movement (state 1: no
// drive, state 2: drive to the hoop) with exponential emissions of the
// inverse speed u and the distance to the hoop v,
//
//	θ_j ~ Dirichlet(α_j) (row j of the transition matrix, α from the data),
//	φ, λ positive-ordered,  φ₁, λ₁ ~ normal(0, 1),  φ₂, λ₂ ~ normal(3, 1),
//	e_t(k) = exponential_lpdf(u_t | φ_k) + exponential_lpdf(v_t | λ_k),
//	γ₁(k) = e₁(k),  γ_t(k) = log Σ_j exp(γ_{t−1}(j) + log θ_j[k]) + e_t(k),
//	target += log Σ_k exp γ_N(k),
//
// the forward algorithm with no initial-state distribution, as in the Stan
// program (ops.HMMMarginal evaluates it, see driveForward). Parameters theta1,
// theta2 (simplexes), phi, lambda: six free dimensions. The Viterbi
// generated quantities are not computed.
func HMMDrive0(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "bball_drive_event_0-hmm_drive_0.json")
	d := readDrive(l, false)
	if l.err != nil {
		return nil, l.err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	theta := driveTransitions(b, d.alpha)
	phi := b.PositiveOrdered("phi", 2)
	lambda := b.PositiveOrdered("lambda", 2)
	b.Sample(ppl.Normal{Mu: []float64{0, 3}, Sigma: 1.0}, phi)
	b.Sample(ppl.Normal{Mu: []float64{0, 3}, Sigma: 1.0}, lambda)

	// e_t(k) = log φ_k + log λ_k − φ_k u_t − λ_k v_t = (1, u_t, v_t)·W_k.
	w := g.rows(g.add(g.log(phi), g.log(lambda)), g.neg(phi), g.neg(lambda))
	b.AddLogDensity(g.driveForward(theta, driveDesign(b, d), w))
	return b.Model()
}

// HMMDrive1 is posteriordb's bball_drive_event_1-hmm_drive_1: the model of
// HMMDrive0 with normal emissions of known standard deviations τ and ρ
// (data) on standardised inputs,
//
//	θ_j ~ Dirichlet(α_j),  φ, λ ordered,
//	φ₁, λ₁ ~ normal(0, 1),  φ₂, λ₂ ~ normal(3, 1),
//	e_t(k) = normal_lpdf(u_t | φ_k, τ) + normal_lpdf(v_t | λ_k, ρ),
//
// and the same forward algorithm. Parameters theta1, theta2 (simplexes),
// phi, lambda: six free dimensions.
func HMMDrive1(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "bball_drive_event_1-hmm_drive_1.json")
	d := readDrive(l, true)
	if l.err != nil {
		return nil, l.err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	theta := driveTransitions(b, d.alpha)
	phi := b.Ordered("phi", 2)
	lambda := b.Ordered("lambda", 2)
	b.Sample(ppl.Normal{Mu: []float64{0, 3}, Sigma: 1.0}, phi)
	b.Sample(ppl.Normal{Mu: []float64{0, 3}, Sigma: 1.0}, lambda)

	// Expanded, e_t(k) = c_t + (1, u_t, v_t)·W_k with
	//   W_k = (−φ_k²/(2τ²) − λ_k²/(2ρ²), φ_k/τ², λ_k/ρ²),
	//   c_t = −u_t²/(2τ²) − v_t²/(2ρ²) − log(2πτρ),
	// and c_t, the same in both states, leaves the recursion: Σ_t c_t is a
	// constant.
	it2, ir2 := 1/(d.tau*d.tau), 1/(d.rho*d.rho)
	w0 := g.add(g.mul(g.c(-0.5*it2), g.square(phi)), g.mul(g.c(-0.5*ir2), g.square(lambda)))
	w := g.rows(w0, g.mul(g.c(it2), phi), g.mul(g.c(ir2), lambda))
	var c float64
	for t := range d.n {
		c += -0.5*it2*d.u[t]*d.u[t] - 0.5*ir2*d.v[t]*d.v[t] - 2*logSqrt2Pi - logOf(d.tau) - logOf(d.rho)
	}
	b.AddLogDensity(g.c(c))
	b.AddLogDensity(g.driveForward(theta, driveDesign(b, d), w))
	return b.Model()
}

// driveData are the data of the two drive models.
type driveData struct {
	n        int
	u, v     []float64
	alpha    [2][]float64
	tau, rho float64
}

// readDrive reads the drive models' data: K = 2 states, N pairs (u, v)
// (non-negative for the exponential emissions, all finite for the normal
// ones, which also read their standard deviations tau and rho) and the
// 2 × 2 matrix alpha of Dirichlet concentrations.
func readDrive(l *loader, normal bool) driveData {
	var d driveData
	k := l.integer("K", 1)
	d.n = l.integer("N", 1)
	if l.err == nil && k != 2 {
		l.keep(l.d.errorf("K = %d: this model is written for K = 2 states", k))
	}
	if normal {
		d.u, d.v = l.vector("u", d.n), l.vector("v", d.n)
		d.tau, d.rho = l.number("tau"), l.number("rho")
		if l.err == nil && !(d.tau > 0 && d.rho > 0) {
			l.keep(l.d.errorf("tau = %v, rho = %v: want positive standard deviations", d.tau, d.rho))
		}
	} else {
		d.u = l.boundedVector("u", d.n, 0, math.MaxFloat64)
		d.v = l.boundedVector("v", d.n, 0, math.MaxFloat64)
	}
	alpha := l.matrix("alpha", 2, 2)
	if l.err != nil {
		return d
	}
	for j := range 2 {
		d.alpha[j] = []float64{alpha.At(j, 0), alpha.At(j, 1)}
		for kk, a := range d.alpha[j] {
			if !(a > 0) {
				l.keep(l.d.errorf("field \"alpha\": element [%d, %d] is %v, want > 0 (Dirichlet concentrations)", j+1, kk+1, a))
			}
		}
	}
	return d
}

// driveTransitions declares the rows theta1, theta2 of the transition
// matrix with their Dirichlet priors, and returns the matrix Θ (Θ_jk the
// probability of a move from state j to state k).
func driveTransitions(b *ppl.Builder, alpha [2][]float64) *gorgonia.Node {
	g := graph{b}
	var rows [2]*gorgonia.Node
	for j, name := range []string{"theta1", "theta2"} {
		rows[j] = b.Simplex(name, 2)
		b.Sample(ppl.Dirichlet{Alpha: alpha[j]}, rows[j])
	}
	return g.rows(rows[0], rows[1])
}

// driveDesign binds the N × 3 matrix of rows (1, u_t, v_t).
func driveDesign(b *ppl.Builder, d driveData) *gorgonia.Node {
	x := make([]float64, 0, 3*d.n)
	for t := range d.n {
		x = append(x, 1, d.u[t], d.v[t])
	}
	return b.Data("design", x, d.n, 3)
}

// rows stacks vectors of equal length as the rows of a matrix.
func (g graph) rows(v ...*gorgonia.Node) *gorgonia.Node {
	r := make([]*gorgonia.Node, len(v))
	for i, x := range v {
		r[i] = g.b.Check(gorgonia.Reshape(x, []int{1, x.Shape().TotalSize()}))
	}
	return g.b.Check(ops.Concat(0, r...))
}

// driveForward is the log likelihood of a two-state hidden Markov model
// with transition matrix theta and no initial-state distribution, whose
// log emissions are e_t(k) = (x W)_tk, x the N × 3 design and W 3 × 2:
// log Σ_k exp γ_N(k), by ops.HMMMarginal (the forward algorithm, its
// gradient by forward–backward).
func (g graph) driveForward(theta, design, w *gorgonia.Node) *gorgonia.Node {
	return g.b.Check(ops.HMMMarginal(g.matVec(design, w), g.log(theta), nil))
}
