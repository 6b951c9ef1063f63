package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// ModelRandomWalk is a within-model kernel: Gaussian random-walk Metropolis
// with a fixed proposal N(0, Σ_k) per model, the within-model move of the
// paper's experiments. It keeps scratch space and evaluates the target, so
// it serves one chain at a time.
type ModelRandomWalk struct {
	target TransdimensionalTarget
	chol   [][]float64 // row-major lower Cholesky factor of Σ_k
	dims   []int
	eps    []float64
	prop   []float64
}

// NewModelRandomWalk returns the kernel with proposal covariances cov[k]
// (symmetric positive definite, of size ModelDim(k)); a nil cov[k] means the
// identity, and a nil cov the identity for every model. Models of dimension
// zero never move.
func NewModelRandomWalk(target TransdimensionalTarget, cov []mat.Symmetric) (*ModelRandomWalk, error) {
	if target == nil {
		return nil, fmt.Errorf("kernels: nil transdimensional target")
	}
	nm := target.NumModels()
	if cov == nil {
		cov = make([]mat.Symmetric, nm)
	}
	if len(cov) != nm {
		return nil, fmt.Errorf("%w: %d covariances for %d models", ErrDimension, len(cov), nm)
	}
	r := &ModelRandomWalk{target: target, chol: make([][]float64, nm), dims: make([]int, nm)}
	nmax := 0
	for k := range cov {
		n := target.ModelDim(k)
		r.dims[k] = n
		nmax = max(nmax, n)
		l := make([]float64, n*n)
		if cov[k] == nil {
			for i := 0; i < n; i++ {
				l[i*n+i] = 1
			}
		} else {
			if cov[k].SymmetricDim() != n {
				return nil, fmt.Errorf("%w: covariance %d is %d×%d, model has dimension %d", ErrDimension, k, cov[k].SymmetricDim(), cov[k].SymmetricDim(), n)
			}
			var ch mat.Cholesky
			if !ch.Factorize(cov[k]) {
				return nil, fmt.Errorf("kernels: covariance %d is not positive definite", k)
			}
			var lt mat.TriDense
			ch.LTo(&lt)
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					l[i*n+j] = lt.At(i, j)
				}
			}
		}
		r.chol[k] = l
	}
	r.eps = make([]float64, nmax)
	r.prop = make([]float64, nmax)
	return r, nil
}

// Step proposes θ' = θ + L_k ε, ε ~ N(0, I), and accepts with probability
// min(1, π(k, θ')/π(k, θ)); failures reject.
func (r *ModelRandomWalk) Step(rng *rand.Rand, k int, theta []float64, logDensity float64) (float64, bool) {
	if k < 0 || k >= len(r.dims) || len(theta) != r.dims[k] || r.dims[k] == 0 {
		return logDensity, false
	}
	n := r.dims[k]
	l := r.chol[k]
	eps, prop := r.eps[:n], r.prop[:n]
	for i := range eps {
		eps[i] = rng.NormFloat64()
	}
	for i := 0; i < n; i++ {
		s := theta[i]
		for j := 0; j <= i; j++ {
			s += l[i*n+j] * eps[j]
		}
		prop[i] = s
	}
	lp, err := r.target.LogDensity(k, prop)
	if err != nil || math.IsNaN(lp) || math.IsInf(lp, 1) {
		return logDensity, false
	}
	if math.Log(rng.Float64()) < lp-logDensity {
		copy(theta, prop)
		return lp, true
	}
	return logDensity, false
}

// NUTSWithin runs a NUTS kernel per model as the within-model kernel of a
// transdimensional sampler. Each NUTS kernel's target is model k's
// log-density up to a constant (it need not include log p(k)); the
// difference is carried over so the chain's log π(k, θ) stays exact.
// It costs one extra gradient evaluation per step, at the start point.
type NUTSWithin struct {
	nuts   []*NUTS
	states []NUTSState
	// Infos[k] is the NUTSInfo of model k's latest step, for diagnostics
	// and step-size adaptation.
	Infos []NUTSInfo
}

// NewNUTSWithin wraps one NUTS kernel per model (nuts[k].Target().Dim()
// must equal the model's dimension; a nil entry means model k never moves
// within).
func NewNUTSWithin(nuts []*NUTS) (*NUTSWithin, error) {
	if len(nuts) == 0 {
		return nil, fmt.Errorf("kernels: no NUTS kernels")
	}
	w := &NUTSWithin{nuts: append([]*NUTS(nil), nuts...), states: make([]NUTSState, len(nuts)), Infos: make([]NUTSInfo, len(nuts))}
	for k, n := range nuts {
		if n == nil {
			continue
		}
		d := n.Target().Dim()
		w.states[k] = NUTSState{Position: make([]float64, d), Grad: make([]float64, d)}
	}
	return w, nil
}

// Step runs one NUTS transition of model k from θ.
func (w *NUTSWithin) Step(rng *rand.Rand, k int, theta []float64, logDensity float64) (float64, bool) {
	if k < 0 || k >= len(w.nuts) || w.nuts[k] == nil || len(theta) != len(w.states[k].Position) {
		return logDensity, false
	}
	s := w.states[k]
	copy(s.Position, theta)
	s.LogDensity = evalGrad(w.nuts[k].Target(), s.Position, s.Grad)
	if math.IsInf(s.LogDensity, -1) || !finiteGrad(s.Grad) {
		return logDensity, false
	}
	before := s.LogDensity
	s, info := w.nuts[k].Step(rng, s)
	w.states[k] = s
	w.Infos[k] = info
	moved := false
	for i, v := range s.Position {
		if v != theta[i] {
			moved = true
			break
		}
	}
	if !moved {
		return logDensity, false
	}
	copy(theta, s.Position)
	return logDensity + (s.LogDensity - before), true
}
