package flows

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/internal/scalar"
)

// Laplace is the affine transport of a Laplace approximation N(μ, H⁻¹) of
// a log-density, μ its mode and H its negative Hessian there (the
// precision): z = Lᵀ(θ − μ) with H = LLᵀ, so that the approximation is
// carried to the standard normal. It needs no samples: FitLaplace finds
// the mode and the Hessian from the log-density and its gradient.
//
// Forward and Inverse are plain triangular products (the dimension of one
// model of a variable selection is small), allocate nothing, keep no state
// and so are safe for concurrent use; z and θ may be the same slice.
type Laplace struct {
	mean []float64
	l    []float64 // lower Cholesky factor of H, row-major
	// logDet is Σ log L_ii = log|det J_T|.
	logDet float64
	// LogEvidence is the Laplace approximation of log ∫ exp(f):
	// f(μ) + (n/2) log 2π − ½ log|H|. It is NaN when the fit is not
	// Converged or was Regularised.
	LogEvidence float64
	// LogMode is f(μ).
	LogMode float64
	// Converged reports whether the mode search met its gradient
	// tolerance or the Newton decrement fell below 1e-10.
	Converged bool
	// Regularised reports whether the Hessian was not positive definite
	// and its eigenvalues were floored (the transport is still a valid
	// bijection, only a poorer proposal).
	Regularised bool
	// Evaluations counts the gradient evaluations of the fit.
	Evaluations int
}

// LaplaceSettings tunes FitLaplace; nil or zero fields take the defaults.
type LaplaceSettings struct {
	// GradientTol is the tolerance on the largest absolute gradient entry
	// at the mode (default 1e-7).
	GradientTol float64
	// MaxIterations bounds the Newton iterations (default 100).
	MaxIterations int
	// Step is the finite-difference step of the Hessian (default 1e-5).
	Step float64
}

// decrementTol is the Newton decrement ∇fᵀH⁻¹∇f/2 below which the mode
// search stops: the remaining gain in f is below its rounding.
const decrementTol = 1e-10

// ErrLaplace is returned (wrapped) when a log-density cannot be
// evaluated at the starting point of a Laplace fit.
var ErrLaplace = errors.New("flows: Laplace fit failed")

// FitLaplace fits the Laplace transport of the log-density f, which
// returns f(x) and writes its gradient into grad: the mode by damped
// Newton iterations from x0 (the Hessian by central differences of the
// gradient, a backtracking line search), then the Hessian at the mode. The
// fit is a deterministic function of f and x0. It fails only when f cannot
// be evaluated at x0; a fit that does not converge, or whose Hessian is
// not negative definite, still gives a usable transport, flagged by
// Converged and Regularised.
func FitLaplace(f func(x, grad []float64) (float64, error), x0 []float64, s *LaplaceSettings) (*Laplace, error) {
	n := len(x0)
	if n == 0 {
		return nil, fmt.Errorf("%w: dimension 0", ErrLaplace)
	}
	set := LaplaceSettings{GradientTol: 1e-7, MaxIterations: 100, Step: 1e-5}
	if s != nil {
		if s.GradientTol > 0 {
			set.GradientTol = s.GradientTol
		}
		if s.MaxIterations > 0 {
			set.MaxIterations = s.MaxIterations
		}
		if s.Step > 0 {
			set.Step = s.Step
		}
	}
	evals := 0
	eval := func(x, g []float64) float64 {
		evals++
		v, err := f(x, g)
		if err != nil || math.IsNaN(v) || !scalar.AllFinite(g) {
			return math.Inf(-1)
		}
		return v
	}
	x := append([]float64(nil), x0...)
	g := make([]float64, n)
	fx := eval(x, g)
	if math.IsInf(fx, 0) {
		return nil, fmt.Errorf("%w: the log-density or its gradient is not finite at the starting point", ErrLaplace)
	}
	h := mat.NewSymDense(n, nil)
	hess := func(at []float64) {
		var jac mat.Dense
		jac.ReuseAs(n, n)
		fd.Jacobian(&jac, func(y, x []float64) {
			if math.IsInf(eval(x, y), 0) {
				for i := range y {
					y[i] = math.NaN()
				}
			}
		}, at, &fd.JacobianSettings{Formula: fd.Central, Step: set.Step})
		for i := range n {
			for j := i; j < n; j++ {
				h.SetSym(i, j, -(jac.At(i, j)+jac.At(j, i))/2)
			}
		}
	}
	converged := false
	dir := make([]float64, n)
	trial := make([]float64, n)
	gt := make([]float64, n)
	var ch mat.Cholesky
	for range set.MaxIterations {
		if floats.Norm(g, math.Inf(1)) < set.GradientTol {
			converged = true
			break
		}
		hess(x)
		// Newton direction H⁻¹∇f where H is positive definite, else the
		// gradient (steepest ascent).
		if ch.Factorize(h) {
			var d mat.VecDense
			if ch.SolveVecTo(&d, mat.NewVecDense(n, g)) == nil {
				copy(dir, d.RawVector().Data)
			} else {
				copy(dir, g)
			}
		} else {
			copy(dir, g)
		}
		slope := floats.Dot(g, dir)
		if !(slope > 0) {
			copy(dir, g)
			slope = floats.Dot(g, g)
		} else if slope < 2*decrementTol {
			// The Newton decrement: the quadratic model promises an
			// increase of slope/2, below what f's rounding can show.
			converged = true
			break
		}
		step, moved := 1.0, false
		for range 60 {
			floats.AddScaledTo(trial, x, step, dir)
			ft := eval(trial, gt)
			if ft >= fx+1e-4*step*slope {
				copy(x, trial)
				copy(g, gt)
				fx, moved = ft, true
				break
			}
			step /= 2
		}
		if !moved {
			// No ascent that f's rounding can show: at the mode when the
			// Newton decrement is small.
			converged = slope < 1e-6
			break
		}
	}
	if floats.Norm(g, math.Inf(1)) < set.GradientTol {
		converged = true
	}
	hess(x)
	lp, err := NewLaplace(x, h)
	if err != nil {
		return nil, err
	}
	lp.Converged = converged
	lp.LogMode = fx
	lp.Evaluations = evals
	lp.LogEvidence = math.NaN()
	if converged && !lp.Regularised {
		lp.LogEvidence = fx + float64(n)/2*math.Log(2*math.Pi) - lp.logDet
	}
	return lp, nil
}

// factorScaled factors precision into ch when it is positive definite
// and well conditioned once its diagonal is scaled to 1: the condition
// number that matters for the transport is that of the correlations, not
// of the parameters' units (a regression coefficient per unit of a
// predictor in the hundred thousands has a precision 10¹⁴ times another's,
// which says nothing of how well the posterior is determined).
func factorScaled(ch *mat.Cholesky, precision mat.Symmetric) bool {
	n := precision.SymmetricDim()
	d := make([]float64, n)
	for i := range n {
		if v := precision.At(i, i); v > 0 {
			d[i] = math.Sqrt(v)
		} else {
			return false
		}
	}
	scaled := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			scaled.SetSym(i, j, precision.At(i, j)/(d[i]*d[j]))
		}
	}
	var cs mat.Cholesky
	if !cs.Factorize(scaled) || !(cs.Cond() < maxCond) {
		return false
	}
	// precision = D S D = (D L_S)(D L_S)ᵀ.
	var ls mat.TriDense
	cs.LTo(&ls)
	u := mat.NewTriDense(n, mat.Upper, nil)
	for i := range n {
		for j := 0; j <= i; j++ {
			u.SetTri(j, i, ls.At(i, j)*d[i])
		}
	}
	ch.SetFromU(u)
	return true
}

// NewLaplace returns the transport of N(mean, precision⁻¹). A precision
// that is not positive definite has its eigenvalues floored at 1e-8 of the
// largest (or the identity taken when none is positive), and the result is
// marked Regularised.
func NewLaplace(mean []float64, precision mat.Symmetric) (*Laplace, error) {
	n := len(mean)
	if precision == nil || precision.SymmetricDim() != n || n == 0 {
		return nil, fmt.Errorf("flows: NewLaplace: mean of length %d and a precision of another dimension", n)
	}
	if !scalar.AllFinite(mean) {
		return nil, errors.New("flows: NewLaplace: non-finite mean")
	}
	lp := &Laplace{mean: append([]float64(nil), mean...), l: make([]float64, n*n), LogEvidence: math.NaN()}
	finite := true
	for i := range n {
		for j := range n {
			if v := precision.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				finite = false
			}
		}
	}
	var ch mat.Cholesky
	ok := finite && factorScaled(&ch, precision)
	if !ok {
		lp.Regularised = true
		h := mat.NewSymDense(n, nil)
		var eig mat.EigenSym
		if finite && eig.Factorize(precision, true) {
			vals := eig.Values(nil)
			var vecs mat.Dense
			eig.VectorsTo(&vecs)
			top := floats.Max(vals)
			if top > 0 {
				floor := top * 1e-8
				for i := range n {
					for j := i; j < n; j++ {
						var v float64
						for k := range n {
							v += vecs.At(i, k) * math.Max(vals[k], floor) * vecs.At(j, k)
						}
						h.SetSym(i, j, v)
					}
				}
			}
		}
		if !ch.Factorize(h) {
			for i := range n {
				h.SetSym(i, i, 1)
				for j := i + 1; j < n; j++ {
					h.SetSym(i, j, 0)
				}
			}
			ch.Factorize(h)
		}
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	for i := range n {
		for j := 0; j <= i; j++ {
			lp.l[i*n+j] = lt.At(i, j)
		}
		lp.logDet += math.Log(lp.l[i*n+i])
	}
	return lp, nil
}

// Dim is the dimension of θ and z.
func (t *Laplace) Dim() int { return len(t.mean) }

// Mean returns the mode μ. The caller must not modify it.
func (t *Laplace) Mean() []float64 { return t.mean }

// Forward sets z = Lᵀ(θ − μ) and returns log|det J| = Σ log L_ii.
func (t *Laplace) Forward(theta, z []float64) (float64, error) {
	n := len(t.mean)
	if len(theta) != n || len(z) != n {
		return math.NaN(), fmt.Errorf("flows: Laplace.Forward: lengths %d and %d, want %d", len(theta), len(z), n)
	}
	// z_i = Σ_{j≥i} L_ji (θ_j − μ_j): in increasing i, writing z_i only
	// overwrites θ_i, which no later z_k needs.
	for i := range n {
		var s float64
		for j := i; j < n; j++ {
			s += t.l[j*n+i] * (theta[j] - t.mean[j])
		}
		z[i] = s
	}
	return t.logDet, nil
}

// Inverse sets θ = μ + L⁻ᵀz and returns −Σ log L_ii.
func (t *Laplace) Inverse(z, theta []float64) (float64, error) {
	n := len(t.mean)
	if len(theta) != n || len(z) != n {
		return math.NaN(), fmt.Errorf("flows: Laplace.Inverse: lengths %d and %d, want %d", len(z), len(theta), n)
	}
	// Back substitution of Lᵀv = z in decreasing i; v_i overwrites z_i
	// only after z_i is read.
	for i := n - 1; i >= 0; i-- {
		s := z[i]
		for j := i + 1; j < n; j++ {
			s -= t.l[j*n+i] * theta[j]
		}
		theta[i] = s / t.l[i*n+i]
	}
	for i := range n {
		theta[i] += t.mean[i]
	}
	return -t.logDet, nil
}

// LogDensity returns the log-density of the approximation N(μ, H⁻¹) at θ.
// It uses scratch of length Dim.
func (t *Laplace) LogDensity(theta, scratch []float64) (float64, error) {
	ld, err := t.Forward(theta, scratch)
	if err != nil {
		return math.NaN(), err
	}
	return ld - 0.5*floats.Dot(scratch, scratch) - float64(len(scratch))/2*math.Log(2*math.Pi), nil
}

// Precision returns H, the negative Hessian at the mode (floored when
// Regularised).
func (t *Laplace) Precision() *mat.SymDense {
	n := len(t.mean)
	h := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			var v float64
			for k := 0; k <= min(i, j); k++ {
				v += t.l[i*n+k] * t.l[j*n+k]
			}
			h.SetSym(i, j, v)
		}
	}
	return h
}

// Covariance returns H⁻¹.
func (t *Laplace) Covariance() *mat.SymDense {
	n := len(t.mean)
	h := t.Precision()
	var ch mat.Cholesky
	cov := mat.NewSymDense(n, nil)
	if ch.Factorize(h) {
		ch.InverseTo(cov)
	}
	return cov
}
