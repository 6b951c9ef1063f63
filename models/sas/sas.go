package sas

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trjgo/trj/internal/scalar"
)

// ErrDimension is returned (wrapped) when a vector's length does not match a
// component's dimension.
var ErrDimension = errors.New("sas: dimension mismatch")

// ErrNonFinite is returned (wrapped) when an input or a result is NaN or
// ±Inf. It is the same value as flows.ErrNonFinite.
var ErrNonFinite = scalar.ErrNonFinite

const halfLog2Pi = 0.91893853320467274178032973640561764 // ½·log(2π)

// Component is one sinh-arcsinh density p_{ε,δ,L} on R^n. Its methods only
// read the parameters and keep scratch space, so a Component must not be
// shared between goroutines; use Clone.
type Component struct {
	eps, delta []float64
	l          []float64 // lower-triangular L, row-major n×n
	logDetL    float64   // log|det L|
	y, z       []float64 // scratch
}

// NewComponent returns the density of θ = S_{ε,δ}(Lz), z ~ N(0, I). l is the
// row-major lower-triangular n×n matrix L (entries above the diagonal must be
// zero); its diagonal must be non-zero and δ positive.
func NewComponent(eps, delta, l []float64) (*Component, error) {
	n := len(eps)
	if n == 0 || len(delta) != n || len(l) != n*n {
		return nil, fmt.Errorf("%w: len(eps)=%d, len(delta)=%d, len(L)=%d", ErrDimension, len(eps), len(delta), len(l))
	}
	c := &Component{
		eps:   append([]float64(nil), eps...),
		delta: append([]float64(nil), delta...),
		l:     append([]float64(nil), l...),
		y:     make([]float64, n),
		z:     make([]float64, n),
	}
	for i := 0; i < n; i++ {
		if !(delta[i] > 0) || math.IsInf(delta[i], 0) || math.IsNaN(eps[i]) || math.IsInf(eps[i], 0) {
			return nil, fmt.Errorf("sas: need finite ε and 0 < δ < ∞, got ε[%d]=%v, δ[%d]=%v", i, eps[i], i, delta[i])
		}
		for j := 0; j < n; j++ {
			v := l[i*n+j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("sas: %w: L[%d,%d]=%v", ErrNonFinite, i, j, v)
			}
			if j > i && v != 0 {
				return nil, fmt.Errorf("sas: L must be lower triangular, L[%d,%d]=%v", i, j, v)
			}
		}
		d := l[i*n+i]
		if d == 0 {
			return nil, fmt.Errorf("sas: L is singular, L[%d,%d]=0", i, i)
		}
		c.logDetL += math.Log(math.Abs(d))
	}
	return c, nil
}

// Dim returns n.
func (c *Component) Dim() int { return len(c.eps) }

// Clone returns a Component with the same parameters and its own scratch.
func (c *Component) Clone() *Component {
	d, _ := NewComponent(c.eps, c.delta, c.l)
	return d
}

// logCosh is log(cosh(x)) without overflow for large |x|.
func logCosh(x float64) float64 {
	a := math.Abs(x)
	return a + math.Log1p(math.Exp(-2*a)) - math.Ln2
}

// forward sets z = L⁻¹S⁻¹(θ) and returns log|det J| of θ ↦ z; y receives
// S⁻¹(θ).
func (c *Component) forward(theta, y, z []float64) (float64, error) {
	n := len(c.eps)
	if len(theta) != n || len(z) != n {
		return 0, fmt.Errorf("%w: len(theta)=%d, len(z)=%d, want %d", ErrDimension, len(theta), len(z), n)
	}
	ld := -c.logDetL
	for i, t := range theta {
		a := c.delta[i]*math.Asinh(t) - c.eps[i]
		y[i] = math.Sinh(a)
		// d/dθ sinh(δ asinh θ − ε) = cosh(a)·δ/√(1+θ²)
		ld += logCosh(a) + math.Log(c.delta[i]) - 0.5*math.Log1p(t*t)
	}
	// Forward substitution L z = y.
	for i := 0; i < n; i++ {
		s := y[i]
		for j := 0; j < i; j++ {
			s -= c.l[i*n+j] * z[j]
		}
		z[i] = s / c.l[i*n+i]
	}
	return finiteResult(ld, z)
}

// inverse sets θ = S(Lz) and returns log|det J| of z ↦ θ.
func (c *Component) inverse(z, theta []float64) (float64, error) {
	n := len(c.eps)
	if len(theta) != n || len(z) != n {
		return 0, fmt.Errorf("%w: len(z)=%d, len(theta)=%d, want %d", ErrDimension, len(z), len(theta), n)
	}
	ld := c.logDetL
	// theta may alias z, so go from the last row up: row i of Lz only needs
	// z[0..i].
	for i := n - 1; i >= 0; i-- {
		x := 0.0
		for j := 0; j <= i; j++ {
			x += c.l[i*n+j] * z[j]
		}
		b := (math.Asinh(x) + c.eps[i]) / c.delta[i]
		theta[i] = math.Sinh(b)
		// d/dx sinh((asinh x + ε)/δ) = cosh(b)/(δ√(1+x²))
		ld += logCosh(b) - math.Log(c.delta[i]) - 0.5*math.Log1p(x*x)
	}
	return finiteResult(ld, theta)
}

// finiteResult returns the log-Jacobian ld of a map with output out, or
// ErrNonFinite when either is not finite.
func finiteResult(ld float64, out []float64) (float64, error) {
	if !scalar.Finite(ld) {
		return ld, fmt.Errorf("sas: %w: log-Jacobian %v", ErrNonFinite, ld)
	}
	if !scalar.AllFinite(out) {
		return ld, fmt.Errorf("sas: %w: transport output", ErrNonFinite)
	}
	return ld, nil
}

// LogDensity returns log p(θ), normalised.
func (c *Component) LogDensity(theta []float64) (float64, error) {
	ld, err := c.forward(theta, c.y, c.z)
	if err != nil {
		return math.Inf(-1), err
	}
	lp := ld
	for _, v := range c.z {
		lp -= 0.5*v*v + halfLog2Pi
	}
	return lp, nil
}

// LogDensityGrad returns log p(θ) and writes its gradient into grad.
func (c *Component) LogDensityGrad(theta, grad []float64) (float64, error) {
	n := len(c.eps)
	if len(grad) != n {
		return math.Inf(-1), fmt.Errorf("%w: len(grad)=%d, want %d", ErrDimension, len(grad), n)
	}
	lp, err := c.LogDensity(theta)
	if err != nil {
		return lp, err
	}
	// With y = S⁻¹(θ) and z = L⁻¹y, ∂(−½|z|²)/∂y = −L⁻ᵀz; solve Lᵀw = z by
	// back substitution into grad.
	w := grad
	for i := n - 1; i >= 0; i-- {
		s := c.z[i]
		for j := i + 1; j < n; j++ {
			s -= c.l[j*n+i] * w[j]
		}
		w[i] = s / c.l[i*n+i]
	}
	for i, t := range theta {
		a := c.delta[i]*math.Asinh(t) - c.eps[i]
		s := math.Sqrt(1 + t*t)
		dy := math.Cosh(a) * c.delta[i] / s
		// d/dθ log y'(θ) = tanh(a)·δ/√(1+θ²) − θ/(1+θ²)
		grad[i] = -w[i]*dy + math.Tanh(a)*c.delta[i]/s - t/(1+t*t)
	}
	for _, g := range grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return lp, fmt.Errorf("sas: %w: gradient", ErrNonFinite)
		}
	}
	return lp, nil
}

// Sample draws θ ~ p exactly (θ = S(Lz), z ~ N(0, I)) into theta.
func (c *Component) Sample(rng *rand.Rand, theta []float64) error {
	if len(theta) != len(c.eps) {
		return fmt.Errorf("%w: len(theta)=%d, want %d", ErrDimension, len(theta), len(c.eps))
	}
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	_, err := c.inverse(theta, theta)
	return err
}

// Transport is the exact transport T(θ) = L⁻¹S⁻¹(θ) of a Component to the
// standard normal; it satisfies kernels.Transport. It keeps scratch space, so
// each goroutine needs its own.
type Transport struct {
	c *Component
	y []float64
}

// Transport returns the exact transport of c (sharing its parameters, with
// its own scratch).
func (c *Component) Transport() *Transport {
	return &Transport{c: c.Clone(), y: make([]float64, c.Dim())}
}

// Dim returns the dimension of θ and z.
func (t *Transport) Dim() int { return t.c.Dim() }

// Clone returns a Transport with the same parameters and its own scratch,
// for another goroutine (trj.Run's user transports need it).
func (t *Transport) Clone() *Transport { return t.c.Transport() }

// Forward sets z = L⁻¹S⁻¹(θ) and returns log|det J_T(θ)|.
func (t *Transport) Forward(theta, z []float64) (float64, error) {
	return t.c.forward(theta, t.y, z)
}

// Inverse sets θ = S(Lz) and returns log|det J_{T⁻¹}(z)|.
func (t *Transport) Inverse(z, theta []float64) (float64, error) {
	return t.c.inverse(z, theta)
}

// Target is the transdimensional density π(k, θ_k) = p(k)·p_k(θ_k) over a
// list of components; it satisfies kernels.TransdimensionalTarget. It keeps
// scratch space, so each goroutine needs its own (Clone).
type Target struct {
	comps  []*Component
	logP   []float64
	labels []string
}

// NewTarget returns π(k, θ) = prob[k]·p_k(θ). prob must be positive and sum to
// one.
func NewTarget(comps []*Component, prob []float64) (*Target, error) {
	if len(comps) == 0 || len(prob) != len(comps) {
		return nil, fmt.Errorf("sas: %w: %d components, %d probabilities", ErrDimension, len(comps), len(prob))
	}
	sum := 0.0
	t := &Target{}
	for k, p := range prob {
		if !(p > 0) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("sas: model probability %d is %v, want > 0", k, p)
		}
		if comps[k] == nil {
			return nil, fmt.Errorf("sas: component %d is nil", k)
		}
		sum += p
		t.comps = append(t.comps, comps[k].Clone())
		t.logP = append(t.logP, math.Log(p))
		t.labels = append(t.labels, fmt.Sprintf("k=%d", k+1))
	}
	if math.Abs(sum-1) > 1e-12 {
		return nil, fmt.Errorf("sas: model probabilities sum to %v, want 1", sum)
	}
	return t, nil
}

// Paper returns the target of the paper's §4.2: p(k=1) = 1/4 with ε = −2,
// δ = 1, L = 1 and p(k=2) = 3/4 with ε = (1.5, −2), δ = (1, 1.5) and
// LLᵀ = [[1, .99], [.99, 1]].
func Paper() *Target {
	c1, err := NewComponent([]float64{-2}, []float64{1}, []float64{1})
	if err != nil {
		panic(err) // constant parameters: cannot fail
	}
	c2, err := NewComponent([]float64{1.5, -2}, []float64{1, 1.5},
		[]float64{1, 0, 0.99, math.Sqrt(1 - 0.99*0.99)})
	if err != nil {
		panic(err)
	}
	t, err := NewTarget([]*Component{c1, c2}, []float64{0.25, 0.75})
	if err != nil {
		panic(err)
	}
	return t
}

// NumModels returns the number of models.
func (t *Target) NumModels() int { return len(t.comps) }

// ModelDim returns the dimension of model k, or 0 for an out-of-range k.
func (t *Target) ModelDim(k int) int {
	if !t.inRange(k) {
		return 0
	}
	return t.comps[k].Dim()
}

// ModelLabel returns the paper's name of model k ("k=1" for index 0), or ""
// for an out-of-range k.
func (t *Target) ModelLabel(k int) string {
	if !t.inRange(k) {
		return ""
	}
	return t.labels[k]
}

// ModelProb returns p(k), which here is also the posterior model
// probability; it is 0 for an out-of-range k.
func (t *Target) ModelProb(k int) float64 {
	if !t.inRange(k) {
		return 0
	}
	return math.Exp(t.logP[k])
}

// Component returns model k's density (shared; do not use concurrently with
// t), or nil for an out-of-range k.
func (t *Target) Component(k int) *Component {
	if !t.inRange(k) {
		return nil
	}
	return t.comps[k]
}

// inRange reports whether k indexes a model; the accessors above take k
// from callers' code, so a bad index must not panic.
func (t *Target) inRange(k int) bool { return k >= 0 && k < len(t.comps) }

// LogDensity returns log p(k) + log p_k(θ).
func (t *Target) LogDensity(k int, theta []float64) (float64, error) {
	if k < 0 || k >= len(t.comps) {
		return math.Inf(-1), fmt.Errorf("sas: model %d out of range [0, %d)", k, len(t.comps))
	}
	lp, err := t.comps[k].LogDensity(theta)
	return lp + t.logP[k], err
}

// Transports returns fresh exact transports, one per model.
func (t *Target) Transports() []*Transport {
	out := make([]*Transport, len(t.comps))
	for k, c := range t.comps {
		out[k] = c.Transport()
	}
	return out
}

// Clone returns a Target with the same parameters and its own scratch.
func (t *Target) Clone() *Target {
	u := &Target{logP: append([]float64(nil), t.logP...), labels: append([]string(nil), t.labels...)}
	for _, c := range t.comps {
		u.comps = append(u.comps, c.Clone())
	}
	return u
}
