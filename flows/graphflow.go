package flows

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/internal/scalar"
	"github.com/trjgo/trj/internal/training"
)

// Builder writes a flow of one's own as a gorgonia graph. FitGraph trains it
// with the trainer of the package's flows, and the resulting GraphFlow is a
// transport for TRJ like any other flow. The flow acts on standardised
// samples: GraphFlow applies a fixed standardisation, fitted to the
// training samples, before the map.
//
// Forward is called with a batch x of shape (B, n) (B is 1 for single-point
// evaluation) and must return z = T(x) of the same shape and the per-row
// log|det J_T(x)| of shape (B). Its parameters are taken from p in a fixed
// order, and all NumParams of them must be taken. Any gorgonia op that ad
// lowers (see package ad) and the ops of package ad/ops may be used.
type Builder interface {
	// Dim is the dimension n of the flow.
	Dim() int
	// NumParams is the length of the flat parameter vector.
	NumParams() int
	// Init fills params (length NumParams) with initial values.
	Init(params []float64, rng *rand.Rand)
	// Forward adds z = T(x) and its per-row log-determinant to x's graph.
	Forward(x *gorgonia.Node, p *Params) (z, logDet *gorgonia.Node, err error)
}

// InverseBuilder is a Builder that also writes the inverse map as a graph:
// given z (B, n) it returns x = T⁻¹(z) and the per-row log|det J_T⁻¹(z)|.
// Without it, GraphFlow.Inverse solves T(x) = z numerically.
type InverseBuilder interface {
	Builder
	Inverse(z *gorgonia.Node, p *Params) (x, logDet *gorgonia.Node, err error)
}

// Params hands out a flow's parameters as gorgonia nodes: consecutive
// blocks of the flat parameter vector, in the order of the calls. While
// training they are the variables ad differentiates with respect to; for
// evaluation they hold the fitted values.
type Params struct {
	b  *gb
	at int
}

// Vector returns the next n parameters as a vector node.
func (p *Params) Vector(n int) *gorgonia.Node { return p.next(n) }

// Matrix returns the next rows·cols parameters as a row-major matrix node.
func (p *Params) Matrix(rows, cols int) *gorgonia.Node { return p.next(rows, cols) }

func (p *Params) next(shape ...int) *gorgonia.Node {
	sz := 1
	for _, d := range shape {
		if d < 1 {
			if p.b.err == nil {
				p.b.err = fmt.Errorf("flows: parameter block of shape %v", shape)
			}
			return nil
		}
		sz *= d
	}
	v := p.b.view(p.at, shape...)
	p.at += sz
	return v
}

// Constant returns a constant (B, n)-shaped or other node holding v, for
// masks and other fixed tensors of a flow's graph.
func Constant(v []float64, shape ...int) *gorgonia.Node {
	return gorgonia.NewConstant(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), v...))))
}

// GraphFlow is a flow written as a Builder, with its fitted parameters and
// standardisation s(θ) = scale ⊙ (θ − shift): T = B ∘ s. Forward and Inverse
// run compiled forward-only programs and do not allocate; a GraphFlow keeps
// their scratch space, so each goroutine needs its own Clone.
type GraphFlow struct {
	b            Builder
	params       []float64
	shift, scale []float64
	ldStd        float64
	fwd, inv     *ad.Program
	out          []float64 // program outputs: n values, then the log-determinant
	// Numeric inverse (no InverseBuilder): Newton's method on a
	// finite-difference Jacobian.
	jac, x0, x1, r, z1 []float64
	ipiv               []int
}

// NewGraphFlow returns the flow of b with the given parameters and
// standardisation, compiling its evaluation programs.
func NewGraphFlow(b Builder, params, shift, scale []float64) (*GraphFlow, error) {
	if b == nil {
		return nil, errors.New("flows: nil Builder")
	}
	n := b.Dim()
	if n < 1 || b.NumParams() < 1 {
		return nil, fmt.Errorf("flows: Builder of dimension %d with %d parameters", n, b.NumParams())
	}
	if len(params) != b.NumParams() || !scalar.AllFinite(params) {
		return nil, fmt.Errorf("flows: %d parameters (finite: %t), Builder has %d", len(params), scalar.AllFinite(params), b.NumParams())
	}
	if len(shift) != n || len(scale) != n {
		return nil, fmt.Errorf("flows: %d shifts and %d scales for dimension %d", len(shift), len(scale), n)
	}
	f := &GraphFlow{b: b, params: append([]float64(nil), params...), shift: append([]float64(nil), shift...), scale: append([]float64(nil), scale...)}
	for i := range shift {
		if !scalar.Finite(shift[i]) || !(scale[i] > 0) || math.IsInf(scale[i], 0) {
			return nil, fmt.Errorf("flows: standardisation %d: shift %v, scale %v", i, shift[i], scale[i])
		}
		f.ldStd += math.Log(scale[i])
	}
	var err error
	if f.fwd, err = f.compile(false); err != nil {
		return nil, err
	}
	if _, ok := b.(InverseBuilder); ok {
		if f.inv, err = f.compile(true); err != nil {
			return nil, err
		}
	}
	f.scratch()
	return f, nil
}

func (f *GraphFlow) scratch() {
	n := f.b.Dim()
	f.out = make([]float64, n+1)
	if f.inv == nil {
		f.jac = make([]float64, n*n)
		f.x0, f.x1, f.r, f.z1 = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		f.ipiv = make([]int, n)
	}
}

// compile builds the single-point program of the forward map (θ → z with
// the standardisation) or of the inverse (z → θ).
func (f *GraphFlow) compile(inverse bool) (*ad.Program, error) {
	n := f.b.Dim()
	b := &gb{g: gorgonia.NewGraph(), values: f.params}
	in := gorgonia.NewMatrix(b.g, tensor.Float64, gorgonia.WithShape(1, n), gorgonia.WithName("in"))
	p := &Params{b: b}
	a, c := make([]float64, n), make([]float64, n)
	var out, ld *gorgonia.Node
	var err error
	if !inverse {
		for i := range a {
			a[i], c[i] = f.scale[i], -f.shift[i]*f.scale[i]
		}
		v := b.n(gorgonia.Add(b.n(gorgonia.HadamardProd(in, Constant(a, 1, n))), Constant(c, 1, n)))
		if b.err == nil {
			out, ld, err = f.b.Forward(v, p)
			b.n(nil, err)
		}
		if b.err == nil {
			ld = b.n(gorgonia.Add(ld, b.scalar(f.ldStd)))
		}
	} else {
		var v *gorgonia.Node
		v, ld, err = f.b.(InverseBuilder).Inverse(in, p)
		b.n(nil, err)
		for i := range a {
			a[i], c[i] = 1/f.scale[i], f.shift[i]
		}
		if b.err == nil {
			out = b.n(gorgonia.Add(b.n(gorgonia.HadamardProd(v, Constant(a, 1, n))), Constant(c, 1, n)))
			ld = b.n(gorgonia.Sub(ld, b.scalar(f.ldStd)))
		}
	}
	if b.err != nil {
		return nil, fmt.Errorf("flows: building the flow's graph: %w", b.err)
	}
	if err := checkBuilt(f.b, p, out, ld, 1); err != nil {
		return nil, err
	}
	return b.compileMap("flow's graph", in, out, ld)
}

// checkBuilt checks what a Builder returned for a batch of the given size.
func checkBuilt(b Builder, p *Params, z, ld *gorgonia.Node, rows int) error {
	n := b.Dim()
	switch {
	case z == nil || ld == nil:
		return errors.New("flows: Builder returned a nil node")
	case !z.Shape().Eq(tensor.Shape{rows, n}):
		return fmt.Errorf("flows: Builder's map has shape %v, want (%d, %d)", z.Shape(), rows, n)
	case ld.Shape().TotalSize() != rows || (len(ld.Shape()) != 1 && rows > 1):
		return fmt.Errorf("flows: Builder's log-determinant has shape %v, want (%d)", ld.Shape(), rows)
	case p.at != b.NumParams():
		return fmt.Errorf("flows: Builder took %d parameters, NumParams is %d", p.at, b.NumParams())
	}
	return nil
}

// Dim returns the dimension of the flow.
func (f *GraphFlow) Dim() int { return f.b.Dim() }

// Params returns a copy of the flow's parameters.
func (f *GraphFlow) Params() []float64 { return append([]float64(nil), f.params...) }

// Standardisation returns copies of the shift and scale of s.
func (f *GraphFlow) Standardisation() (shift, scale []float64) {
	return append([]float64(nil), f.shift...), append([]float64(nil), f.scale...)
}

// Clone returns a copy with its own scratch space, for another goroutine.
// The compiled programs' instructions and the parameters are shared.
func (f *GraphFlow) Clone() *GraphFlow {
	g := *f
	g.fwd = f.fwd.Clone()
	if f.inv != nil {
		g.inv = f.inv.Clone()
	}
	g.scratch()
	return &g
}

// Forward sets z = T(θ) and returns log|det J_T(θ)|.
func (f *GraphFlow) Forward(theta, z []float64) (float64, error) {
	n := f.b.Dim()
	if len(theta) != n || len(z) != n {
		return 0, fmt.Errorf("flows: Forward on %d→%d values, flow dimension %d", len(theta), len(z), n)
	}
	return mapResult("Forward", f.fwd.Outputs(theta, f.out), f.out, z)
}

// Inverse sets θ = T⁻¹(z) and returns log|det J_T⁻¹(z)|: from the compiled
// inverse graph of an InverseBuilder, else by Newton's method on T(θ) = z
// (to a residual of 1e-10, at most 100 steps), which needs T to be smooth.
func (f *GraphFlow) Inverse(z, theta []float64) (float64, error) {
	n := f.b.Dim()
	if len(theta) != n || len(z) != n {
		return 0, fmt.Errorf("flows: Inverse on %d→%d values, flow dimension %d", len(z), len(theta), n)
	}
	if f.inv != nil {
		return mapResult("Inverse", f.inv.Outputs(z, f.out), f.out, theta)
	}
	return f.solve(z, theta)
}

// solve is the numeric inverse.
func (f *GraphFlow) solve(z, theta []float64) (float64, error) {
	n := f.b.Dim()
	x := f.x0
	for i := range x { // start from the standardisation's inverse
		x[i] = f.shift[i] + z[i]/f.scale[i]
	}
	for it := 0; it < 100; it++ {
		ld, err := f.Forward(x, f.r)
		if err != nil {
			return math.NaN(), err
		}
		res := 0.0
		for i := range f.r {
			f.r[i] -= z[i]
			res = max(res, math.Abs(f.r[i]))
		}
		if res <= 1e-10 {
			copy(theta, x)
			return -ld, nil
		}
		// Jacobian by forward differences, column j = ∂T/∂x_j.
		for j := 0; j < n; j++ {
			copy(f.x1, x)
			h := 1e-7 * max(1, math.Abs(x[j]))
			f.x1[j] += h
			if _, err := f.Forward(f.x1, f.z1); err != nil {
				return math.NaN(), err
			}
			for i := 0; i < n; i++ {
				f.jac[i*n+j] = (f.z1[i] - (f.r[i] + z[i])) / h
			}
		}
		a := blas64.General{Rows: n, Cols: n, Stride: n, Data: f.jac}
		if !lapack64.Getrf(a, f.ipiv) {
			return math.NaN(), fmt.Errorf("flows: Inverse: singular Jacobian: %w", ErrNonFinite)
		}
		rhs := blas64.General{Rows: n, Cols: 1, Stride: 1, Data: f.r}
		lapack64.Getrs(blas.NoTrans, a, rhs, f.ipiv)
		for i := range x {
			x[i] -= f.r[i]
		}
	}
	return math.NaN(), fmt.Errorf("flows: Inverse: Newton's method did not converge: %w", ErrNonFinite)
}

// LogDensity returns the flow's log-density at θ, log N(T(θ); 0, I) +
// log|det J_T(θ)|. It allocates.
func (f *GraphFlow) LogDensity(theta []float64) (float64, error) {
	z := make([]float64, f.b.Dim())
	ld, err := f.Forward(theta, z)
	if err != nil {
		return math.Inf(-1), err
	}
	return stdNormalLogPDF(z) + ld, nil
}

// FitGraph trains the flow of b on the rows of x by maximum likelihood with
// the settings of opts (zero fields: defaults), as FitRQMA trains an
// RQMA: the standardisation uses the weighted sample means and standard
// deviations, the parameters start from b.Init with a generator seeded by
// opts.Seed. Cancelling ctx stops training between Adam steps, as for
// FitRQMA.
func FitGraph(ctx context.Context, b Builder, x [][]float64, opts TrainOptions) (*GraphFlow, *TrainReport, error) {
	if b == nil {
		return nil, nil, errors.New("flows: nil Builder")
	}
	n, err := training.CheckRows(x)
	if err != nil {
		return nil, nil, err
	}
	if n != b.Dim() {
		return nil, nil, fmt.Errorf("flows: samples of dimension %d for a flow of dimension %d", n, b.Dim())
	}
	o := opts
	if err := o.validate(len(x)); err != nil {
		return nil, nil, err
	}
	shift, scale, err := training.Standardisation(x, o.Weights, nil)
	if err != nil {
		return nil, nil, err
	}
	np := b.NumParams()
	if np < 1 {
		return nil, nil, fmt.Errorf("flows: Builder has %d parameters", np)
	}
	params := make([]float64, np)
	b.Init(params, rand.New(rand.NewPCG(o.Seed, 0x9a4f)))
	if !scalar.AllFinite(params) {
		return nil, nil, errors.New("flows: Builder.Init gave non-finite parameters")
	}
	gf := &graphBatch{b: b, x: x, shift: shift, scale: scale}
	rep, err := train(ctx, newGraphLearner(gf, params, [][2]int{{0, np}}), len(x), o.Weights, o)
	if err != nil {
		return nil, rep, err
	}
	f, err := NewGraphFlow(b, params, shift, scale)
	return f, rep, err
}

// graphBatch is the log-density of a user's flow on a batch of samples.
type graphBatch struct {
	b            Builder
	x            [][]float64
	shift, scale []float64
}

func (r *graphBatch) numParams() int { return r.b.NumParams() }

func (r *graphBatch) build(b *gb, rows int) (*gorgonia.Node, []*gorgonia.Node) {
	n := r.b.Dim()
	x := b.data("x", nil, rows, n)
	a, c := make([]float64, rows*n), make([]float64, rows*n)
	ldStd := 0.0
	for i := 0; i < n; i++ {
		ldStd += math.Log(r.scale[i])
		for k := 0; k < rows; k++ {
			a[k*n+i], c[k*n+i] = r.scale[i], -r.shift[i]*r.scale[i]
		}
	}
	v := b.n(gorgonia.Add(b.n(gorgonia.HadamardProd(x, Constant(a, rows, n))), Constant(c, rows, n)))
	if b.err != nil {
		return nil, nil
	}
	p := &Params{b: b}
	z, ld, err := r.b.Forward(v, p)
	if b.n(nil, err); b.err != nil {
		return nil, nil
	}
	if err := checkBuilt(r.b, p, z, ld, rows); err != nil {
		b.err = err
		return nil, nil
	}
	if len(ld.Shape()) != 1 {
		ld = b.n(gorgonia.Reshape(ld, tensor.Shape{rows}))
	}
	logq := b.n(gorgonia.Add(b.n(gorgonia.Add(ld, b.scalar(ldStd))), b.stdNormalRows(z)))
	return logq, []*gorgonia.Node{x}
}

func (r *graphBatch) fill(idx []int, _ randSource, bufs [][]float64) {
	n := r.b.Dim()
	for k, j := range idx {
		copy(bufs[0][k*n:(k+1)*n], r.x[j])
	}
}
