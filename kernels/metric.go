package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// MetricKind says which inverse mass matrices a Metric can hold.
type MetricKind int

const (
	// DiagMetric is a diagonal inverse mass matrix, Stan's diag_e (the default).
	DiagMetric MetricKind = iota
	// DenseMetric is a dense inverse mass matrix, Stan's dense_e.
	DenseMetric
	// UnitMetric is the identity, Stan's unit_e; adaptation leaves it alone.
	UnitMetric
)

// metricNames are Stan's names for the metric kinds.
var metricNames = [...]string{DiagMetric: "diag_e", DenseMetric: "dense_e", UnitMetric: "unit_e"}

// String returns Stan's name for the metric.
func (k MetricKind) String() string {
	if k >= 0 && int(k) < len(metricNames) {
		return metricNames[k]
	}
	return fmt.Sprintf("MetricKind(%d)", int(k))
}

// Metric is the Euclidean metric of Hamiltonian Monte Carlo, stored as the
// inverse mass matrix M⁻¹ (an estimate of the posterior covariance, as Stan
// reports it). Momenta are drawn from N(0, M) and the kinetic energy is
// ½·pᵀM⁻¹p. A Metric is immutable and may be shared between goroutines.
type Metric struct {
	kind MetricKind
	dim  int
	// diag holds M⁻¹ for DiagMetric, and sqrtDiag its square roots, by
	// which momentum draws are divided.
	diag, sqrtDiag []float64
	// dense holds M⁻¹ row-major and chol its lower Cholesky factor L
	// (M⁻¹ = L·Lᵀ) for DenseMetric; momenta are L⁻ᵀ·z.
	dense, chol []float64
}

// NewUnitMetric returns the identity metric of dimension dim.
func NewUnitMetric(dim int) (*Metric, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("%w: metric dimension %d", ErrDimension, dim)
	}
	return &Metric{kind: UnitMetric, dim: dim}, nil
}

// NewDiagMetric returns the diagonal metric with inverse mass matrix
// diag(invMass). Every entry must be positive and finite; invMass is copied.
func NewDiagMetric(invMass []float64) (*Metric, error) {
	if len(invMass) == 0 {
		return nil, fmt.Errorf("%w: empty inverse mass matrix", ErrDimension)
	}
	for i, v := range invMass {
		if !(v > 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("kernels: inverse mass matrix entry %d is %v, want positive and finite", i, v)
		}
	}
	sqrtDiag := make([]float64, len(invMass))
	for i, v := range invMass {
		sqrtDiag[i] = math.Sqrt(v)
	}
	return &Metric{kind: DiagMetric, dim: len(invMass), diag: append([]float64(nil), invMass...), sqrtDiag: sqrtDiag}, nil
}

// errNotPositiveDefinite is returned (wrapped) for a dense matrix whose
// Cholesky factorization fails.
var errNotPositiveDefinite = errors.New("kernels: matrix is not positive definite")

// NewDenseMetric returns the dense metric with inverse mass matrix invMass,
// which must be symmetric positive definite; it is copied.
func NewDenseMetric(invMass mat.Symmetric) (*Metric, error) {
	if invMass == nil {
		return nil, fmt.Errorf("%w: nil inverse mass matrix", ErrDimension)
	}
	n := invMass.SymmetricDim()
	if n == 0 {
		return nil, fmt.Errorf("%w: empty inverse mass matrix", ErrDimension)
	}
	chol, err := choleskyLower(invMass)
	if err != nil {
		return nil, err
	}
	dense := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			dense[i*n+j] = invMass.At(i, j)
		}
	}
	return &Metric{kind: DenseMetric, dim: n, dense: dense, chol: chol}, nil
}

// choleskyLower returns the row-major lower Cholesky factor of a.
func choleskyLower(a mat.Symmetric) ([]float64, error) {
	n := a.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			if v := a.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("kernels: matrix entry (%d,%d) is %v", i, j, v)
			}
		}
	}
	var c mat.Cholesky
	if !c.Factorize(a) {
		return nil, errNotPositiveDefinite
	}
	var l mat.TriDense
	c.LTo(&l)
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			out[i*n+j] = l.At(i, j)
		}
	}
	return out, nil
}

// Kind returns the kind of the metric.
func (m *Metric) Kind() MetricKind { return m.kind }

// Dim returns the dimension of the metric.
func (m *Metric) Dim() int { return m.dim }

// InvMassDiag returns a copy of the diagonal of M⁻¹.
func (m *Metric) InvMassDiag() []float64 {
	out := make([]float64, m.dim)
	switch m.kind {
	case UnitMetric:
		for i := range out {
			out[i] = 1
		}
	case DiagMetric:
		copy(out, m.diag)
	case DenseMetric:
		for i := range out {
			out[i] = m.dense[i*m.dim+i]
		}
	}
	return out
}

// InvMass returns a copy of M⁻¹ as a dense symmetric matrix.
func (m *Metric) InvMass() *mat.SymDense {
	out := mat.NewSymDense(m.dim, nil)
	for i := 0; i < m.dim; i++ {
		switch m.kind {
		case UnitMetric:
			out.SetSym(i, i, 1)
		case DiagMetric:
			out.SetSym(i, i, m.diag[i])
		case DenseMetric:
			for j := i; j < m.dim; j++ {
				out.SetSym(i, j, m.dense[i*m.dim+j])
			}
		}
	}
	return out
}

// sampleMomentum draws p ~ N(0, M) into p.
func (m *Metric) sampleMomentum(rng *rand.Rand, p []float64) {
	switch m.kind {
	case UnitMetric:
		for i := range p {
			p[i] = rng.NormFloat64()
		}
	case DiagMetric:
		sd := m.sqrtDiag[:len(p)]
		for i := range p {
			p[i] = rng.NormFloat64() / sd[i]
		}
	case DenseMetric:
		// Solve Lᵀp = z by back substitution: Cov(L⁻ᵀz) = (L·Lᵀ)⁻¹ = M.
		n := m.dim
		for i := range p {
			p[i] = rng.NormFloat64()
		}
		for i := n - 1; i >= 0; i-- {
			s := p[i]
			for j := i + 1; j < n; j++ {
				s -= m.chol[j*n+i] * p[j]
			}
			p[i] = s / m.chol[i*n+i]
		}
	}
}

// velocity sets v = M⁻¹·p, the time derivative of the position.
func (m *Metric) velocity(p, v []float64) {
	switch m.kind {
	case UnitMetric:
		copy(v, p)
	case DiagMetric:
		for i, pi := range p {
			v[i] = m.diag[i] * pi
		}
	case DenseMetric:
		n := m.dim
		for i := 0; i < n; i++ {
			row := m.dense[i*n : i*n+n]
			s := 0.0
			for j, pj := range p {
				s += row[j] * pj
			}
			v[i] = s
		}
	}
}

// kickDrift is the first half of a leapfrog step: p += half·g, v = M⁻¹p,
// q += eps·v, fused into one pass where the metric allows.
func (m *Metric) kickDrift(p, g, v, q []float64, half, eps float64) {
	n := len(p)
	g, v, q = g[:n], v[:n], q[:n]
	switch m.kind {
	case UnitMetric:
		for i := range p {
			pi := p[i] + half*g[i]
			p[i] = pi
			v[i] = pi
			q[i] += eps * pi
		}
	case DiagMetric:
		d := m.diag[:n]
		for i := range p {
			pi := p[i] + half*g[i]
			p[i] = pi
			vi := d[i] * pi
			v[i] = vi
			q[i] += eps * vi
		}
	default:
		for i := range p {
			p[i] += half * g[i]
		}
		m.velocity(p, v)
		for i := range q {
			q[i] += eps * v[i]
		}
	}
}

// kick is the second half of a leapfrog step: p += half·g, v = M⁻¹p. It
// returns pᵀv, summed in index order as dot would.
func (m *Metric) kick(p, g, v []float64, half float64) float64 {
	n := len(p)
	g, v = g[:n], v[:n]
	s := 0.0
	switch m.kind {
	case UnitMetric:
		for i := range p {
			pi := p[i] + half*g[i]
			p[i] = pi
			v[i] = pi
			s += pi * pi
		}
	case DiagMetric:
		d := m.diag[:n]
		for i := range p {
			pi := p[i] + half*g[i]
			p[i] = pi
			vi := d[i] * pi
			v[i] = vi
			s += pi * vi
		}
	default:
		for i := range p {
			p[i] += half * g[i]
		}
		m.velocity(p, v)
		s = dot(p, v)
	}
	return s
}
