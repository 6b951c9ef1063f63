package flows

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/internal/scalar"
	"github.com/trjgo/trj/internal/training"
)

// ErrSingular is returned (wrapped) when a sample covariance is singular or
// too ill-conditioned to factorise, for example with fewer samples than
// dimensions or a coordinate that is constant.
var ErrSingular = errors.New("flows: singular covariance")

// maxCond bounds the condition number of an accepted covariance; beyond it
// the Cholesky solve loses all significant digits.
const maxCond = 1e13

// Affine is the transport z = L⁻¹(θ − μ), with μ a (weighted) sample mean and
// L the lower Cholesky factor of the (weighted) sample covariance. It needs
// no training. Forward and Inverse run compiled gorgonia graphs (a
// standardisation layer: a difference and a triangular solve, and its
// inverse, a matrix–vector product and a sum). They are safe for concurrent
// use: each value evaluates its own copies of the maps, and its calls take
// turns; give each goroutine a Clone to run them in parallel.
type Affine struct {
	mean   []float64
	l      blas64.Triangular // lower, row-major
	logDet float64           // Σ log L_ii = log|det J_T⁻¹|
	progs  *affinePrograms   // compiled maps, shared by clones
	mu     sync.Mutex        // guards own
	own    [2]*ad.Program    // this value's copies of the maps (forward, inverse) for buffered calls, made on first use
}

// affinePrograms holds an Affine's compiled forward and inverse maps,
// compiled on the first evaluation of the flow or of any of its clones.
// They never evaluate themselves: each value evaluates its own clones.
type affinePrograms struct {
	once     sync.Once
	done     atomic.Bool // compiled without error: fwd and inv are set
	fwd, inv *ad.Program
	err      error
}

// FitAffine returns the affine transport of the rows of x with optional
// non-negative weights (nil: equal). Only relative weights matter: they are
// rescaled to sum to the number of positive weights before the unbiased
// weighted covariance (denominator Σw − 1) is taken.
func FitAffine(x [][]float64, weights []float64) (*Affine, error) {
	n, err := training.CheckRows(x)
	if err != nil {
		return nil, err
	}
	if weights != nil && len(weights) != len(x) {
		return nil, fmt.Errorf("flows: %d weights for %d samples", len(weights), len(x))
	}
	pos := 0
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("flows: FitAffine: weights[%d] = %v, want finite and non-negative", i, w)
		}
		if w > 0 {
			pos++
		}
	}
	if weights != nil && pos == 0 {
		return nil, fmt.Errorf("flows: FitAffine: all %d weights are zero", len(weights))
	}
	weights = training.FrequencyWeights(weights)
	if len(x) <= n {
		return nil, fmt.Errorf("flows: %d samples in dimension %d: %w", len(x), n, ErrSingular)
	}
	m := mat.NewDense(len(x), n, nil)
	for r, row := range x {
		m.SetRow(r, row)
	}
	mean := make([]float64, n)
	for i := range mean {
		mean[i] = stat.Mean(mat.Col(nil, i, m), weights)
	}
	var cov mat.SymDense
	stat.CovarianceMatrix(&cov, m, weights)
	return NewAffine(mean, &cov)
}

// NewAffine returns the affine transport with mean μ and covariance LLᵀ.
func NewAffine(mean []float64, cov mat.Symmetric) (*Affine, error) {
	n := len(mean)
	if cov == nil {
		return nil, errors.New("flows: NewAffine needs a covariance")
	}
	if n == 0 || cov.SymmetricDim() != n {
		return nil, fmt.Errorf("flows: mean of length %d, covariance of dimension %d", n, cov.SymmetricDim())
	}
	if !scalar.AllFinite(mean) {
		return nil, errors.New("flows: non-finite mean")
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return nil, ErrSingular
	}
	if c := ch.Cond(); !(c < maxCond) {
		return nil, fmt.Errorf("flows: covariance condition number %.3g: %w", c, ErrSingular)
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			l[i*n+j] = lt.At(i, j)
		}
	}
	return affineFromFactor(mean, l)
}

// affineFromFactor builds the transport from μ and a row-major lower
// Cholesky factor, which it keeps.
func affineFromFactor(mean, l []float64) (*Affine, error) {
	n := len(mean)
	a := &Affine{mean: append([]float64(nil), mean...), progs: &affinePrograms{}}
	a.l = blas64.Triangular{N: n, Stride: n, Data: l, Uplo: blas.Lower, Diag: blas.NonUnit}
	for i := 0; i < n; i++ {
		d := l[i*n+i]
		if !(d > 0) || !scalar.Finite(d) {
			return nil, fmt.Errorf("flows: Cholesky factor diagonal %v: %w", d, ErrSingular)
		}
		a.logDet += math.Log(d)
	}
	return a, nil
}

// Dim returns the dimension of the transport.
func (a *Affine) Dim() int { return len(a.mean) }

// Clone returns a copy of a that shares its mean, factor and compiled maps
// (a fitted flow never changes them). An Affine is safe for concurrent use,
// so a clone is needed only where a separate value is wanted: Clone lets a
// set of transports clone each of its members alike.
func (a *Affine) Clone() *Affine {
	// Field by field: a's own programs may be set by a concurrent
	// buffered call, so they are not read here.
	return &Affine{mean: a.mean, l: a.l, logDet: a.logDet, progs: a.progs}
}

// programs returns the compiled maps, compiling them on first use.
func (a *Affine) programs() (*affinePrograms, error) {
	p := a.progs
	if p.done.Load() { // every call after the first: no closure, no Do
		return p, nil
	}
	p.once.Do(func() {
		p.fwd, p.inv, p.err = a.compile()
		p.done.Store(p.err == nil)
	})
	return p, p.err
}

// compile builds the graphs of the forward map z = L⁻¹(θ − μ) and of the
// inverse θ = L z + μ, and compiles them to forward-only programs that read
// μ (and the solve L) in place. Their log-determinants, −Σ log L_ii and
// Σ log L_ii, are constants of the maps, computed once by affineFromFactor.
func (a *Affine) compile() (fwd, inv *ad.Program, err error) {
	n := len(a.mean)
	build := func(inverse bool) (*ad.Program, error) {
		b := &gb{g: gorgonia.NewGraph()}
		mu := gorgonia.NewVector(b.g, tensor.Float64, gorgonia.WithShape(n), gorgonia.WithName("mean"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(n), tensor.WithBacking(a.mean))))
		shared := []*gorgonia.Node{mu}
		in := gorgonia.NewVector(b.g, tensor.Float64, gorgonia.WithShape(n), gorgonia.WithName("in"))
		var out *gorgonia.Node
		if inverse {
			// L as a constant: ad then skips the zeros above its
			// diagonal in the product.
			out = b.n(gorgonia.Add(b.n(gorgonia.Mul(Constant(a.l.Data, n, n), in)), mu))
		} else {
			// The solve reads only L's lower triangle, in place.
			l := gorgonia.NewMatrix(b.g, tensor.Float64, gorgonia.WithShape(n, n), gorgonia.WithName("L"),
				gorgonia.WithValue(tensor.New(tensor.WithShape(n, n), tensor.WithBacking(a.l.Data))))
			shared = append(shared, l)
			out = b.n(ops.SolveTriangular(l, b.n(gorgonia.Sub(in, mu)), true))
		}
		if b.err != nil {
			return nil, fmt.Errorf("flows: building the affine graph: %w", b.err)
		}
		prog, err := ad.CompileOutputs(b.g, []*gorgonia.Node{in}, []*gorgonia.Node{out}, ad.WithSharedData(shared...))
		if err != nil {
			return nil, fmt.Errorf("flows: compiling the affine graph: %w", err)
		}
		return prog, nil
	}
	if fwd, err = build(false); err != nil {
		return nil, nil, err
	}
	if inv, err = build(true); err != nil {
		return nil, nil, err
	}
	return fwd, inv, nil
}

// Mean returns a copy of μ.
func (a *Affine) Mean() []float64 { return append([]float64(nil), a.mean...) }

// CholeskyFactor returns a copy of the lower Cholesky factor L.
func (a *Affine) CholeskyFactor() *mat.TriDense {
	n := len(a.mean)
	return mat.NewTriDense(n, mat.Lower, append([]float64(nil), a.l.Data...))
}

// Forward sets z = L⁻¹(θ − μ) and returns log|det J_T| = −Σ log L_ii.
func (a *Affine) Forward(theta, z []float64) (float64, error) {
	return a.apply(false, theta, z)
}

// Inverse sets θ = μ + L z and returns log|det J_T⁻¹| = Σ log L_ii.
func (a *Affine) Inverse(z, theta []float64) (float64, error) {
	return a.apply(true, z, theta)
}

// apply runs the inverse or forward program on in, writes the map's value
// to out and returns its log-determinant.
func (a *Affine) apply(inverse bool, in, out []float64) (float64, error) {
	name := func() string {
		if inverse {
			return "Inverse"
		}
		return "Forward"
	}
	n := len(a.mean)
	if len(in) != n || len(out) != n {
		return 0, fmt.Errorf("flows: %s on %d→%d values, flow dimension %d", name(), len(in), len(out), n)
	}
	ps, err := a.programs()
	if err != nil {
		return math.NaN(), err
	}
	p, k, ld := ps.fwd, 0, -a.logDet
	if inverse {
		p, k, ld = ps.inv, 1, a.logDet
	}
	if err = a.buffered(p, k, in, out); err != nil {
		return math.NaN(), fmt.Errorf("flows: %s: %w", name(), err)
	}
	if !scalar.AllFinite(out) {
		return ld, fmt.Errorf("flows: %s: %w", name(), ErrNonFinite)
	}
	return ld, nil
}

// buffered runs map k (0 forward, 1 inverse) on a's own copy of p, which
// uses the program's buffers, one call at a time.
func (a *Affine) buffered(p *ad.Program, k int, in, out []float64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.own[k] == nil {
		a.own[k] = p.Clone()
	}
	return a.own[k].Outputs(in, out)
}

// LogDensity returns the log-density at θ of the normal distribution
// N(μ, LLᵀ) that the transport pushes to N(0, I). It allocates.
func (a *Affine) LogDensity(theta []float64) (float64, error) {
	z := make([]float64, len(a.mean))
	ld, err := a.Forward(theta, z)
	if err != nil {
		return math.Inf(-1), err
	}
	return stdNormalLogPDF(z) + ld, nil
}
