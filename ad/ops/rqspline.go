package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/internal/rqspline"
)

// RQSpline applies the monotone rational-quadratic spline of Durkan et al.
// (2019) on [0, 1] elementwise to the vector x (length n) and returns the
// transformed vector and the log-derivative of the map for each element.
//
// The spline of element i has K bins given by unnormalised parameters: w
// (widths) and h (heights) of shape (n, K) and d (knot derivatives) of shape
// (n, K+1), one row per element; or w, h of length K and d of length K+1,
// shared by all elements. Widths and heights go through a softmax and
// derivatives through a softplus, with the floors of internal/rqspline.
// Elements outside [0, 1] pass through unchanged with log-derivative 0.
//
// If inverse is false, y = f(x) and logDeriv = log f'(x). If inverse is true,
// y = f⁻¹(x) and logDeriv = log |dy/dx| = −log f'(y). Either way logDeriv is
// the log-derivative of the map that was applied, so a flow adds it.
//
// Both outputs come from one op whose packed (2, n) output holds y in row 0
// and logDeriv in row 1; the two returned nodes are views of its rows, so the
// spline is evaluated once. Gradients flow to x, w, h and d. Non-finite
// parameters make evaluation return an error.
func RQSpline(x, w, h, d *gorgonia.Node, inverse bool) (y, logDeriv *gorgonia.Node, err error) {
	if err := checkNodes("RQSpline", x, w, h, d); err != nil {
		return nil, nil, err
	}
	op := rqSplineOp{inverse: inverse}
	if _, err := op.layout(x.Shape(), w.Shape(), h.Shape(), d.Shape()); err != nil {
		return nil, nil, err
	}
	op.shared = w.Dims() == 1
	packed, err := gorgonia.ApplyOp(op, x, w, h, d)
	if err != nil {
		return nil, nil, err
	}
	n := x.Shape()[0]
	packedShape := tensor.Shape{2, n}
	if y, err = gorgonia.ApplyOp(sliceOp{off: 0, in: packedShape, out: tensor.Shape{n}}, packed); err != nil {
		return nil, nil, err
	}
	if logDeriv, err = gorgonia.ApplyOp(sliceOp{off: n, in: packedShape, out: tensor.Shape{n}}, packed); err != nil {
		return nil, nil, err
	}
	return y, logDeriv, nil
}

// splineLayout holds the sizes of an RQSpline application.
type splineLayout struct {
	n, k   int
	shared bool
}

// rqSplineOp is the packed (y; logDeriv) spline transform.
type rqSplineOp struct {
	matOp
	inverse, shared bool
}

func (op rqSplineOp) layout(s ...tensor.Shape) (splineLayout, error) {
	if len(s) < 4 {
		return splineLayout{}, fmt.Errorf("ops: RQSpline: got %d inputs, want 4", len(s))
	}
	x, w, h, d := s[0], s[1], s[2], s[3]
	if len(x) != 1 || x[0] < 1 {
		return splineLayout{}, fmt.Errorf("ops: RQSpline: x has shape %v, want a vector", x)
	}
	n := x[0]
	switch {
	case len(w) == 1 && w[0] >= 1 && h.Eq(w) && len(d) == 1 && d[0] == w[0]+1:
		return splineLayout{n: n, k: w[0], shared: true}, nil
	case len(w) == 2 && w[0] == n && w[1] >= 1 && h.Eq(w) && len(d) == 2 && d[0] == n && d[1] == w[1]+1:
		return splineLayout{n: n, k: w[1]}, nil
	}
	return splineLayout{}, fmt.Errorf("ops: RQSpline: parameter shapes %v, %v, %v for x of length %d; want (K), (K), (K+1) or (%d, K), (%d, K), (%d, K+1)",
		w, h, d, n, n, n, n)
}

func (op rqSplineOp) paramDims() int {
	if op.shared {
		return 1
	}
	return 2
}

func (op rqSplineOp) Arity() int { return 4 }
func (op rqSplineOp) Type() hm.Type {
	p := tensorType(op.paramDims())
	return hm.NewFnType(tensorType(1), p, p, p, tensorType(2))
}
func (op rqSplineOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	l, err := op.layout(s...)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{2, l.n}, nil
}
func (op rqSplineOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op rqSplineOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op rqSplineOp) Hashcode() uint32                               { return hashOf(op) }
func (op rqSplineOp) String() string {
	return fmt.Sprintf("RQSpline{inverse=%t,shared=%t}", op.inverse, op.shared)
}
func (op rqSplineOp) DiffWRT(int) []bool { return []bool{true, true, true, true} }

// SymDiff computes all four gradients in one op, packed into a flat vector,
// and slices them out.
func (op rqSplineOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	all, err := gorgonia.ApplyOp(rqSplineGradOp{fwd: op}, in[0], in[1], in[2], in[3], grad)
	if err != nil {
		return nil, err
	}
	allShape := all.Shape().Clone()
	res := make(gorgonia.Nodes, 4)
	off := 0
	for i, n := range in {
		s := n.Shape().Clone()
		if res[i], err = gorgonia.ApplyOp(sliceOp{off: off, in: allShape, out: s}, all); err != nil {
			return nil, err
		}
		off += s.TotalSize()
	}
	return res, nil
}

// Lower implements ad.Lowerer.
func (op rqSplineOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	l, err := op.layout(in...)
	if err != nil {
		return nil, err
	}
	return rqSplineKernel{splineLayout: l, inverse: op.inverse}, nil
}

type rqSplineKernel struct {
	splineLayout
	inverse bool
}

// params returns the parameter rows of element i.
func (l splineLayout) params(in [][]float64, i int) (w, h, d []float64) {
	if l.shared {
		return in[1], in[2], in[3]
	}
	return in[1][i*l.k : (i+1)*l.k], in[2][i*l.k : (i+1)*l.k], in[3][i*(l.k+1) : (i+1)*(l.k+1)]
}

// check validates buffer sizes and parameter values.
func (l splineLayout) check(in [][]float64) error {
	rows := l.n
	if l.shared {
		rows = 1
	}
	if len(in) < 4 || len(in[0]) != l.n || len(in[1]) != rows*l.k || len(in[2]) != rows*l.k || len(in[3]) != rows*(l.k+1) {
		return errBufferSize
	}
	for i := 0; i < rows; i++ {
		w, h, d := l.params(in, i)
		if err := rqspline.Validate(w, h, d); err != nil {
			return err
		}
	}
	return nil
}

func (k rqSplineKernel) Eval(out []float64, in [][]float64) error {
	if len(out) != 2*k.n {
		return errBufferSize
	}
	if err := k.check(in); err != nil {
		return err
	}
	for i, x := range in[0] {
		w, h, d := k.params(in, i)
		if k.inverse {
			y, ld := rqspline.Inverse(x, w, h, d)
			out[i], out[k.n+i] = y, -ld
		} else {
			out[i], out[k.n+i] = rqspline.Forward(x, w, h, d)
		}
	}
	return nil
}

// rqSplineGradOp computes (x̄, w̄, h̄, d̄) flattened into one vector from
// (x, w, h, d, ḡ), ḡ being the gradient of the packed output.
type rqSplineGradOp struct {
	gradOp
	fwd rqSplineOp
}

func (op rqSplineGradOp) Arity() int { return 5 }
func (op rqSplineGradOp) Type() hm.Type {
	p := tensorType(op.fwd.paramDims())
	return hm.NewFnType(tensorType(1), p, p, p, tensorType(2), tensorType(1))
}
func (op rqSplineGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if len(s) != 5 {
		return nil, fmt.Errorf("ops: RQSplineGrad: got %d inputs, want 5", len(s))
	}
	l, err := op.fwd.layout(s...)
	if err != nil {
		return nil, err
	}
	if s[4].TotalSize() != 2*l.n {
		return nil, fmt.Errorf("ops: RQSplineGrad: gradient shape %v, want (2, %d)", s[4], l.n)
	}
	var total int
	for _, sh := range s[:4] {
		total += sh.TotalSize()
	}
	return tensor.Shape{total}, nil
}
func (op rqSplineGradOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) {
	return doWithKernel(op, v)
}
func (op rqSplineGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op rqSplineGradOp) Hashcode() uint32      { return hashOf(op) }
func (op rqSplineGradOp) String() string        { return op.fwd.String() + "Grad" }

// Lower implements ad.Lowerer.
func (op rqSplineGradOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 5 {
		return nil, fmt.Errorf("ops: RQSplineGrad: got %d inputs, want 5", len(in))
	}
	l, err := op.fwd.layout(in...)
	if err != nil {
		return nil, err
	}
	return rqSplineGradKernel{splineLayout: l, inverse: op.fwd.inverse}, nil
}

type rqSplineGradKernel struct {
	splineLayout
	inverse bool
}

func (k rqSplineGradKernel) Eval(out []float64, in [][]float64) error {
	if err := k.check(in); err != nil {
		return err
	}
	nw, nd := len(in[1]), len(in[3])
	if len(in) != 5 || len(in[4]) != 2*k.n || len(out) != k.n+2*nw+nd {
		return errBufferSize
	}
	for i := range out {
		out[i] = 0
	}
	gx := out[:k.n]
	gw := out[k.n : k.n+nw]
	gh := out[k.n+nw : k.n+2*nw]
	gd := out[k.n+2*nw:]
	g := in[4]
	for i, x := range in[0] {
		w, h, d := k.params(in, i)
		var gwi, ghi, gdi []float64
		if k.shared {
			gwi, ghi, gdi = gw, gh, gd
		} else {
			gwi, ghi, gdi = gw[i*k.k:(i+1)*k.k], gh[i*k.k:(i+1)*k.k], gd[i*(k.k+1):(i+1)*(k.k+1)]
		}
		if k.inverse {
			// The op's second output is −log f'(y), so the gradient with
			// respect to rqspline's log f' is −ḡ.
			gx[i] = rqspline.InverseVJP(x, w, h, d, g[i], -g[k.n+i], gwi, ghi, gdi)
		} else {
			gx[i] = rqspline.ForwardVJP(x, w, h, d, g[i], g[k.n+i], gwi, ghi, gdi)
		}
	}
	return nil
}

// sliceOp copies the contiguous range [off, off+size(out)) of its flattened
// input into a node of shape out. It unpacks the outputs of multi-output ops.
// With embed set it is the adjoint: it places its input at offset off of a
// zero tensor of shape out. Each is the other's gradient.
type sliceOp struct {
	matOp
	embed   bool
	off     int
	in, out tensor.Shape
}

func (op sliceOp) Arity() int { return 1 }
func (op sliceOp) Type() hm.Type {
	return hm.NewFnType(tensorType(len(op.in)), tensorType(len(op.out)))
}
func (op sliceOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if (op.embed || !s[0].Eq(op.in)) && s[0].TotalSize() != op.in.TotalSize() {
		return nil, fmt.Errorf("ops: %v: input shape %v", op, s[0])
	}
	return op.out.Clone(), nil
}
func (op sliceOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op sliceOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op sliceOp) Hashcode() uint32                               { return hashOf(op) }
func (op sliceOp) String() string {
	name := "Slice"
	if op.embed {
		name = "Embed"
	}
	return fmt.Sprintf("%s{%d,%v->%v}", name, op.off, op.in, op.out)
}
func (op sliceOp) DiffWRT(int) []bool { return []bool{true} }
func (op sliceOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	g, err := gorgonia.ApplyOp(sliceOp{embed: !op.embed, off: op.off, in: op.out, out: op.in}, grad)
	return gorgonia.Nodes{g}, err
}

// Lower implements ad.Lowerer.
func (op sliceOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	part, whole := op.out.TotalSize(), op.in.TotalSize()
	if op.embed {
		part, whole = whole, part
	}
	if len(in) != 1 || in[0].TotalSize() != op.in.TotalSize() || op.off < 0 || op.off+part > whole {
		return nil, fmt.Errorf("ops: %v: bad input shapes %v", op, in)
	}
	if op.embed {
		return embedKernel{off: op.off, n: part, total: whole}, nil
	}
	return sliceKernel{off: op.off, n: part}, nil
}

type sliceKernel struct{ off, n int }

// WritesFullOutput implements ad.FullWriter: Eval writes every element of out.
func (k sliceKernel) WritesFullOutput() bool { return true }

func (k sliceKernel) Eval(out []float64, in [][]float64) error {
	if len(in) != 1 || len(out) != k.n || len(in[0]) < k.off+k.n {
		return errBufferSize
	}
	copy(out, in[0][k.off:k.off+k.n])
	return nil
}

type embedKernel struct{ off, n, total int }

// WritesFullOutput implements ad.FullWriter: Eval writes every element of out.
func (k embedKernel) WritesFullOutput() bool { return true }

func (k embedKernel) Eval(out []float64, in [][]float64) error {
	if len(in) != 1 || len(in[0]) != k.n || len(out) != k.total {
		return errBufferSize
	}
	for i := range out {
		out[i] = 0
	}
	copy(out[k.off:], in[0])
	return nil
}
