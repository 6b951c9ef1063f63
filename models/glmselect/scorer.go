package glmselect

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/internal/scalar"
	"github.com/trjgo/trj/ppl"
)

// scorer is one chain's ppl.NeighbourhoodScorer of a Gaussian space under
// a fixed-g g-prior. For a model γ of k terms it keeps the Cholesky factor
// L of C_γ (the standardised Gram matrix of its terms), w = L⁻¹X_γᵀy,
// b = C_γ⁻¹X_γᵀy and the diagonal of C_γ⁻¹, and for every term j the
// projections V = L⁻¹C_γj and W = C_γ⁻¹C_γj (k × P each). Every add, drop
// and swap changes R² by a rank-one formula in those:
//
//	add j:          R² + (X_jᵀy − W_jᵀX_γᵀy)² / ((c_jj − |V_j|²) ‖y‖²)
//	drop i:         R² − b_i² / ((C_γ⁻¹)_ii ‖y‖²)
//	swap i for j:   the drop, then the add with |V_j|² and W_jᵀX_γᵀy
//	                downdated by W_ij²/(C_γ⁻¹)_ii and W_ij b_i/(C_γ⁻¹)_ii,
//
// so that scoring a model and its P + kP neighbours costs O(k³ + k²P), and
// the evidence is a function of (k, R²). A term whose residual keeps less
// than collinearTol of its sum of squares is exactly collinear with the
// model's: that model scores −Inf, as the support (inSupport) says.
type scorer struct {
	e     *Evidence
	ybar  float64
	scale []float64
	idx   []int
	L     []float64 // k×k, lower, row-major
	w, b  []float64 // k
	ainv  []float64 // k: diagonal of C_γ⁻¹
	V, W  []float64 // k×P, row-major
	q, vw []float64 // P: |V_j|², W_jᵀX_γᵀy
	u     []float64 // k, Draw's scratch
	r2    float64
	ok    bool
	hasV  bool // V, q, vw and the diagonal of C_γ⁻¹ are the model's
	hasW  bool // W is the model's
}

// newScorer returns a scorer of e's models (fixed-g g-priors only) for
// the design d.
func newScorer(e *Evidence, d *design) (ppl.NeighbourhoodScorer, error) {
	if e.gm == nil || e.r.kind != gFixed {
		return nil, fmt.Errorf("glmselect: neighbourhood scorers need a fixed-g g-prior, not %v", e.r.display)
	}
	return &scorer{e: e, ybar: floats.Sum(d.y) / float64(d.n), scale: d.scale,
		q: make([]float64, e.p), vw: make([]float64, e.p)}, nil
}

// Score implements ppl.NeighbourhoodScorer.
func (s *scorer) Score(active []int) (float64, error) {
	gm, p, k := s.e.gm, s.e.p, len(active)
	s.idx = append(s.idx[:0], active...)
	s.L, s.w, s.b, s.ainv = grow(s.L, k*k), grow(s.w, k), grow(s.b, k), grow(s.ainv, k)
	s.V, s.W = grow(s.V, k*p), grow(s.W, k*p)
	s.hasV, s.hasW = false, false
	s.ok = k <= gm.maxTerms() && gm.cholesky(active, s.L)
	if !s.ok {
		return math.Inf(-1), nil
	}
	L, w, b := s.L, s.w, s.b
	for i, j := range active {
		v := gm.xty[j]
		for m := range i {
			v -= L[i*k+m] * w[m]
		}
		w[i] = v / L[i*k+i]
	}
	s.r2 = floats.Dot(w, w) / gm.syy
	for i := k - 1; i >= 0; i-- {
		v := w[i]
		for m := i + 1; m < k; m++ {
			v -= L[m*k+i] * b[m]
		}
		b[i] = v / L[i*k+i]
	}
	// The projections wait for Flips, Swaps or Draw: a proposed model
	// the chain rejects needs its evidence only, and neither the O(k²P)
	// projections nor the Gram rows of its terms.
	return s.e.logEvidenceR2(k, s.r2), nil
}

// Flips implements ppl.NeighbourhoodScorer, with the fast logarithm of
// fastEvidence.
func (s *scorer) Flips(flip []float64) {
	gm, k := s.e.gm, len(s.idx)
	if !s.ok {
		for i := range flip {
			flip[i] = math.Inf(-1)
		}
		return
	}
	s.project()
	r := 0
	for j := range flip {
		if r < k && s.idx[r] == j {
			flip[j] = s.fastEvidence(k-1, s.r2-s.b[r]*s.b[r]/(s.ainv[r]*gm.syy))
			r++
			continue
		}
		flip[j] = s.add(k, j, s.r2, s.q[j], s.vw[j])
	}
}

// Swaps implements ppl.NeighbourhoodScorer, with the fast logarithm of
// fastEvidence.
func (s *scorer) Swaps(i int, row []float64) {
	gm, p, k := s.e.gm, s.e.p, len(s.idx)
	if !s.ok || k > gm.maxTerms() {
		for j := range row {
			row[j] = math.Inf(-1)
		}
		return
	}
	s.project()
	if !s.hasW {
		s.projectW()
	}
	Wi := s.W[i*p : (i+1)*p]
	a, bi := s.ainv[i], s.b[i]
	r2 := s.r2 - bi*bi/(a*gm.syy)
	// The evidence of a model of k terms with R² ρ is
	// c − ((n−1)/2) log(1 + g(1 − ρ)), c fixed for the row: the loop
	// hoists it, the data's diagonal and the divisions.
	n1, g := float64(s.e.n-1), s.e.r.g
	c := s.e.c0 + (n1-float64(k))/2*s.e.log1pG
	half, ia, isy := n1/2, 1/a, 1/gm.syy
	xty, q, vw, cd := gm.xty[:p], s.q[:p], s.vw[:p], gm.diag[:p]
	// The entry of the slot's own term comes out as the model's own R²
	// (W_ii = 1, its residual 1/(C⁻¹)_ii), by the same formula as the
	// others'.
	for j := range row {
		wij := Wi[j]
		cjj := cd[j]
		d := cjj - q[j] + wij*wij*ia
		if !(d > collinearTol*cjj) {
			row[j] = math.Inf(-1)
			continue
		}
		e := xty[j] - vw[j] + wij*bi*ia
		rho := r2 + e*e/d*isy
		if rho > 1 {
			rho = 1
		}
		row[j] = c - half*scalar.FastLog(1+g*(1-rho))
	}
}

// add is the log evidence of the model of k terms with R² r2 with term j
// added, whose projection on the model has squared norm q (in C's metric)
// and inner product vw with y.
func (s *scorer) add(k, j int, r2, q, vw float64) float64 {
	gm := s.e.gm
	if k+1 > gm.maxTerms() {
		return math.Inf(-1)
	}
	cjj := gm.diag[j]
	d := cjj - q
	if !(d > collinearTol*cjj) {
		return math.Inf(-1)
	}
	a := gm.xty[j] - vw
	return s.fastEvidence(k+1, r2+a*a/(d*gm.syy))
}

// fastEvidence is logEvidenceR2 under the fixed g with a fast logarithm
// (scalar.FastLog, 1e-9 absolute, so about 3e-7 at n = 574): the
// neighbours' values weigh proposals, whose acceptance uses Score's exact
// values.
func (s *scorer) fastEvidence(k int, r2 float64) float64 {
	r2 = math.Min(math.Max(r2, 0), 1)
	n1 := float64(s.e.n - 1)
	return s.e.c0 + (n1-float64(k))/2*s.e.log1pG - n1/2*scalar.FastLog(1+s.e.r.g*(1-r2))
}

// project sets V = L⁻¹C_γ·, q, vw and the diagonal of C_γ⁻¹ for the
// factor in s.L, once per model.
func (s *scorer) project() {
	if s.hasV {
		return
	}
	s.hasV = true
	gm, p, k := s.e.gm, s.e.p, len(s.idx)
	L, V := s.L, s.V
	for r, jr := range s.idx {
		Vr := V[r*p : (r+1)*p]
		copy(Vr, gm.row(jr))
		for m := range r {
			floats.AddScaled(Vr, -L[r*k+m], V[m*p:(m+1)*p])
		}
		floats.Scale(1/L[r*k+r], Vr)
	}
	clear(s.q)
	clear(s.vw)
	for r := range k {
		Vr := V[r*p : (r+1)*p]
		for j, v := range Vr {
			s.q[j] += v * v
		}
		floats.AddScaled(s.vw, s.w[r], Vr)
	}
	s.diagInverse()
}

// projectW sets W = L⁻ᵀV, which only swaps need.
func (s *scorer) projectW() {
	p, k := s.e.p, len(s.idx)
	L, V, W := s.L, s.V, s.W
	s.hasW = true
	for r := k - 1; r >= 0; r-- {
		Wr := W[r*p : (r+1)*p]
		copy(Wr, V[r*p:(r+1)*p])
		for m := r + 1; m < k; m++ {
			floats.AddScaled(Wr, -L[m*k+r], W[m*p:(m+1)*p])
		}
		floats.Scale(1/L[r*k+r], Wr)
	}
}

// diagInverse sets the diagonal of C_γ⁻¹.
func (s *scorer) diagInverse() {
	L, k := s.L, len(s.idx)
	// (C⁻¹)_ii = |L⁻¹e_i|²: column i of L⁻¹ vanishes above row i.
	u := grow(s.u, k)
	s.u = u
	for i := range k {
		var a float64
		for r := i; r < k; r++ {
			v := 0.0
			if r == i {
				v = 1
			}
			for m := i; m < r; m++ {
				v -= L[r*k+m] * u[m]
			}
			u[r] = v / L[r*k+r]
			a += u[r] * u[r]
		}
		s.ainv[i] = a
	}
}

// Draw implements ppl.NeighbourhoodScorer: under the fixed-g g-prior,
// with s = g/(1+g) and b the standardised least-squares fit,
//
//	σ² | y ~ InvGamma((n−1)/2, ‖y−ȳ‖²(1 − s R²)/2),
//	α | σ², y ~ N(ȳ, σ²/n),
//	β_γ | σ², y ~ N(s b, s σ² C_γ⁻¹) on the standardised predictors,
//
// written as (α, β_γ in data units, log σ²).
func (s *scorer) Draw(rng *rand.Rand, theta []float64) error {
	k := len(s.idx)
	if len(theta) != k+2 {
		return fmt.Errorf("glmselect: a draw of %d parameters for a model of %d terms", len(theta), k)
	}
	if !s.ok {
		return fmt.Errorf("glmselect: the model of terms %v has no posterior (outside the prior's support)", s.idx)
	}
	gm, n := s.e.gm, float64(s.e.n)
	sh := s.e.r.g / (1 + s.e.r.g)
	rate := gm.syy * (1 - sh*s.r2) / 2
	prec := distuv.Gamma{Alpha: (n - 1) / 2, Beta: rate, Src: rng}.Rand()
	sigma2 := 1 / prec
	theta[0] = s.ybar + math.Sqrt(sigma2/n)*rng.NormFloat64()
	// β = s b + √(s σ²) L⁻ᵀu, u ~ N(0, I).
	u := grow(s.u, k)
	s.u = u
	for i := range u {
		u[i] = rng.NormFloat64()
	}
	L := s.L
	for i := k - 1; i >= 0; i-- {
		v := u[i]
		for m := i + 1; m < k; m++ {
			v -= L[m*k+i] * u[m]
		}
		u[i] = v / L[i*k+i]
	}
	sd := math.Sqrt(sh * sigma2)
	for i, j := range s.idx {
		theta[1+i] = (sh*s.b[i] + sd*u[i]) / s.scale[j]
	}
	theta[k+1] = math.Log(sigma2)
	return nil
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}
