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

// SplineRows configures RQSplineRows.
type SplineRows struct {
	// Bins is the number of spline bins K.
	Bins int
	// LogitScale multiplies the width and height logits before the
	// softmaxes; 0 means 1. nflows' MADE uses 1/√hidden.
	LogitScale float64
	// Shared is the number of leading coordinates whose parameters are the
	// same in every row: they are read from row 0 only and their knots are
	// computed once per batch, and their gradient goes to row 0. Use it only
	// when the graph guarantees it (in a MADE the first coordinate's
	// parameters are the output biases).
	Shared int
	// Inverse applies the inverse splines.
	Inverse bool
}

// RQSplineRows applies rational-quadratic splines (the splines of RQSpline)
// to a batch: x has shape (B, n) and theta (B, n·(3K+1)), coordinate i of
// row r taking the parameters theta[r, i·(3K+1) : (i+1)·(3K+1)], laid out as
// K width logits, K height logits and K+1 derivative parameters. It returns
// y (B, n), the splines applied elementwise, and logDet (B), each row's sum
// of the log-derivatives of the map applied (for Inverse, −log f'(y)).
// When every coordinate is shared (Shared = n), theta may have a single row.
//
// One op computes both outputs and keeps each spline's knots for its
// gradient, which flows to x and theta. Parameters are not validated on this
// hot path: non-finite parameters give non-finite outputs.
func RQSplineRows(x, theta *gorgonia.Node, cfg SplineRows) (y, logDet *gorgonia.Node, err error) {
	if err := checkNodes("RQSplineRows", x, theta); err != nil {
		return nil, nil, err
	}
	op := rowsOp{SplineRows: cfg}
	if op.LogitScale == 0 {
		op.LogitScale = 1
	}
	l, err := op.layout(x.Shape(), theta.Shape())
	if err != nil {
		return nil, nil, err
	}
	packed, err := gorgonia.ApplyOp(op, x, theta)
	if err != nil {
		return nil, nil, err
	}
	ps := tensor.Shape{l.size()}
	if y, err = gorgonia.ApplyOp(sliceOp{off: 0, in: ps, out: tensor.Shape{l.b, l.n}}, packed); err != nil {
		return nil, nil, err
	}
	if logDet, err = gorgonia.ApplyOp(sliceOp{off: l.b * l.n, in: ps, out: tensor.Shape{l.b}}, packed); err != nil {
		return nil, nil, err
	}
	return y, logDet, nil
}

type rowsLayout struct {
	b, tb, n, k, per, kl, shared int // tb: rows of parameters, b or 1
}

// size is the packed output's length: y, logDet and the knots.
func (l rowsLayout) size() int { return l.b*l.n + l.b + l.b*l.n*l.kl }

type rowsOp struct {
	matOp
	SplineRows
}

func (op rowsOp) layout(x, theta tensor.Shape) (rowsLayout, error) {
	k := op.Bins
	if k < 1 || k > 100 {
		return rowsLayout{}, fmt.Errorf("ops: RQSplineRows: %d bins", k)
	}
	if len(x) != 2 || len(theta) != 2 || x[0] < 1 || x[1] < 1 {
		return rowsLayout{}, fmt.Errorf("ops: RQSplineRows: shapes %v, %v; want (B, n), (B, n·(3K+1))", x, theta)
	}
	per := rqspline.NumParams(k)
	if op.Shared < 0 || op.Shared > x[1] {
		return rowsLayout{}, fmt.Errorf("ops: RQSplineRows: %d shared coordinates of %d", op.Shared, x[1])
	}
	// With every coordinate shared, one row of parameters serves the batch.
	oneRow := op.Shared == x[1] && theta[0] == 1
	if (theta[0] != x[0] && !oneRow) || theta[1] != x[1]*per {
		return rowsLayout{}, fmt.Errorf("ops: RQSplineRows: parameters of shape %v for x of shape %v, want (%d, %d)", theta, x, x[0], x[1]*per)
	}
	return rowsLayout{b: x[0], tb: theta[0], n: x[1], k: k, per: per, kl: rqspline.KnotsLen(k), shared: op.Shared}, nil
}

func (op rowsOp) Arity() int { return 2 }
func (op rowsOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(2), tensorType(1))
}
func (op rowsOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOfN(op, in, 2)
	if err != nil {
		return nil, err
	}
	l, err := op.layout(s[0], s[1])
	if err != nil {
		return nil, err
	}
	return tensor.Shape{l.size()}, nil
}
func (op rowsOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op rowsOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op rowsOp) Hashcode() uint32                               { return hashOf(op) }
func (op rowsOp) String() string {
	return fmt.Sprintf("RQSplineRows{bins=%d,scale=%v,shared=%d,inverse=%t}", op.Bins, op.LogitScale, op.Shared, op.Inverse)
}
func (op rowsOp) DiffWRT(int) []bool { return []bool{true, true} }
func (op rowsOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	all, err := gorgonia.ApplyOp(rowsGradOp{fwd: op}, in[0], in[1], out, grad)
	if err != nil {
		return nil, err
	}
	as := all.Shape().Clone()
	gx, err := gorgonia.ApplyOp(sliceOp{off: 0, in: as, out: in[0].Shape().Clone()}, all)
	if err != nil {
		return nil, err
	}
	gt, err := gorgonia.ApplyOp(sliceOp{off: in[0].Shape().TotalSize(), in: as, out: in[1].Shape().Clone()}, all)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{gx, gt}, nil
}

// Lower implements ad.Lowerer.
func (op rowsOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("ops: %v: %d inputs", op, len(in))
	}
	l, err := op.layout(in[0], in[1])
	if err != nil {
		return nil, err
	}
	return rowsKernel{l: l, op: op}, nil
}

type rowsKernel struct {
	l  rowsLayout
	op rowsOp
}

// WritesFullOutput implements ad.FullWriter: Eval writes every element of out.
func (k rowsKernel) WritesFullOutput() bool { return true }

// paramRow returns the row whose parameters and knots serve coordinate i of
// row r.
func (l rowsLayout) paramRow(r, i int) int {
	if i < l.shared {
		return 0
	}
	return r
}

// knots returns the knots of coordinate i of row r stored in the packed
// output.
func (l rowsLayout) knots(packed []float64, r, i int) rqspline.Knots {
	off := l.b*l.n + l.b + (r*l.n+i)*l.kl
	return rqspline.KnotsOn(packed[off:], l.k)
}

func (k rowsKernel) Eval(out []float64, in [][]float64) error {
	l := k.l
	x, theta := in[0], in[1]
	if len(x) != l.b*l.n || len(theta) != l.tb*l.n*l.per || len(out) != l.size() {
		return errBufferSize
	}
	var uwh [2 * 100]float64 // scaled width and height logits; layout allows at most 100 bins
	sc := k.op.LogitScale
	ys, lds := out[:l.b*l.n], out[l.b*l.n:l.b*l.n+l.b]
	if l.b == 1 {
		// A single row (a flow evaluated at one point): the free spline
		// functions compute only the bin they need, cheaper than full knot
		// tables, which the gradient then recomputes the same way.
		ld := 0.0
		for i := 0; i < l.n; i++ {
			w, h, d := l.scaled(theta, i, sc, &uwh)
			var v, dd float64
			if k.op.Inverse {
				v, dd = rqspline.Inverse(x[i], w, h, d)
				dd = -dd
			} else {
				v, dd = rqspline.Forward(x[i], w, h, d)
			}
			ys[i] = v
			ld += dd
		}
		lds[0] = ld
		return nil
	}
	for r := 0; r < l.b; r++ {
		ld := 0.0
		for i := 0; i < l.n; i++ {
			pr := l.paramRow(r, i)
			kn := l.knots(out, pr, i)
			if pr == r {
				p := theta[(r*l.n+i)*l.per:]
				w, h := uwh[:l.k], uwh[l.k:2*l.k]
				for j := range w {
					w[j] = sc * p[j]
					h[j] = sc * p[l.k+j]
				}
				kn.Set(w, h, p[2*l.k:l.per])
			}
			var v, d float64
			if k.op.Inverse {
				v, d = kn.Inverse(x[r*l.n+i])
				d = -d
			} else {
				v, d = kn.Forward(x[r*l.n+i])
			}
			ys[r*l.n+i] = v
			ld += d
		}
		lds[r] = ld
	}
	return nil
}

// scaled returns coordinate i's parameters of row 0, widths and heights
// scaled into buf.
func (l rowsLayout) scaled(theta []float64, i int, sc float64, buf *[200]float64) (w, h, d []float64) {
	p := theta[i*l.per : (i+1)*l.per]
	w, h = buf[:l.k], buf[l.k:2*l.k]
	for j := range w {
		w[j] = sc * p[j]
		h[j] = sc * p[l.k+j]
	}
	return w, h, p[2*l.k:]
}

// rowsGradOp computes (x̄, θ̄) packed from (x, θ, packed output, its
// gradient).
type rowsGradOp struct {
	gradOp
	fwd rowsOp
}

func (op rowsGradOp) Arity() int { return 4 }
func (op rowsGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(2), tensorType(1), tensorType(1), tensorType(1))
}
func (op rowsGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOfN(op, in, 4)
	if err != nil {
		return nil, err
	}
	l, err := op.fwd.layout(s[0], s[1])
	if err != nil {
		return nil, err
	}
	return tensor.Shape{l.b*l.n + l.tb*l.n*l.per}, nil
}
func (op rowsGradOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op rowsGradOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op rowsGradOp) Hashcode() uint32                               { return hashOf(op) }
func (op rowsGradOp) String() string                                 { return op.fwd.String() + "Grad" }

// Lower implements ad.Lowerer.
func (op rowsGradOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 4 {
		return nil, fmt.Errorf("ops: %v: %d inputs", op, len(in))
	}
	l, err := op.fwd.layout(in[0], in[1])
	if err != nil {
		return nil, err
	}
	return rowsGradKernel{rowsKernel{l: l, op: op.fwd}}, nil
}

type rowsGradKernel struct{ rowsKernel }

func (k rowsGradKernel) Eval(out []float64, in [][]float64) error {
	l := k.l
	x, packed, g := in[0], in[2], in[3]
	if len(x) != l.b*l.n || len(packed) != l.size() || len(g) != l.size() || len(out) != l.b*l.n+l.tb*l.n*l.per {
		return errBufferSize
	}
	gx, gt := out[:l.b*l.n], out[l.b*l.n:]
	clear(gt)
	gy, gld := g[:l.b*l.n], g[l.b*l.n:l.b*l.n+l.b]
	if l.b == 1 { // no knot tables: see rowsKernel.Eval
		var uwh [200]float64
		for i := 0; i < l.n; i++ {
			w, h, d := l.scaled(in[1], i, k.op.LogitScale, &uwh)
			p := gt[i*l.per : (i+1)*l.per]
			if k.op.Inverse {
				gx[i] = rqspline.InverseVJP(x[i], w, h, d, gy[i], -gld[0], p[:l.k], p[l.k:2*l.k], p[2*l.k:])
			} else {
				gx[i] = rqspline.ForwardVJP(x[i], w, h, d, gy[i], gld[0], p[:l.k], p[l.k:2*l.k], p[2*l.k:])
			}
		}
	} else {
		k.gradRows(x, packed, gy, gld, gx, gt)
	}
	if sc := k.op.LogitScale; sc != 1 {
		for c := 0; c < l.tb*l.n; c++ {
			p := gt[c*l.per : c*l.per+2*l.k]
			for j := range p {
				p[j] *= sc
			}
		}
	}
	return nil
}

// gradRows is the gradient of a batch from the knots of the forward pass.
func (k rowsGradKernel) gradRows(x, packed, gy, gld, gx, gt []float64) {
	l := k.l
	for r := 0; r < l.b; r++ {
		for i := 0; i < l.n; i++ {
			pr := l.paramRow(r, i)
			kn := l.knots(packed, pr, i)
			p := gt[(pr*l.n+i)*l.per : (pr*l.n+i+1)*l.per]
			j := r*l.n + i
			if k.op.Inverse {
				gx[j] = kn.InverseVJP(x[j], gy[j], -gld[r], p[:l.k], p[l.k:2*l.k], p[2*l.k:])
			} else {
				gx[j] = kn.ForwardVJP(x[j], gy[j], gld[r], p[:l.k], p[l.k:2*l.k], p[2*l.k:])
			}
		}
	}
}
