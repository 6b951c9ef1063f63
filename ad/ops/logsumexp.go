package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
)

// LogSumExp returns log Σ exp(x), computed stably by factoring out the
// maximum. With axis AllAxes (or 0 for a vector) it reduces every element to
// a scalar; with axis 0 or 1 of a matrix it reduces that axis and returns a
// vector. If every reduced element is −Inf the result is −Inf, with a zero
// gradient.
//
// Unlike gorgonia.LogSumExp in v0.9.18, which returns 1.50 rather than 3.41
// for [1, 2, 3], this is the log-sum-exp.
func LogSumExp(x *gorgonia.Node, axis int) (*gorgonia.Node, error) {
	if err := checkNodes("LogSumExp", x); err != nil {
		return nil, err
	}
	op := logSumExpOp{axis: axis, dims: x.Dims()}
	if op.dims == 1 && axis == 0 {
		op.axis = AllAxes
	}
	if _, err := op.InferShape(x.Shape()); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(op, x)
}

// lseLayout views the input as outer × red × inner, reducing the middle.
type lseLayout struct{ outer, red, inner int }

// layout validates the input shape and returns the reduction layout and the
// output shape.
func (op logSumExpOp) layout(s tensor.Shape) (lseLayout, tensor.Shape, error) {
	if len(s) != op.dims || len(s) == 0 || s.TotalSize() == 0 {
		return lseLayout{}, nil, fmt.Errorf("ops: LogSumExp: input shape %v, want a non-empty %d-d tensor", s, op.dims)
	}
	switch {
	case op.axis == AllAxes:
		return lseLayout{1, s.TotalSize(), 1}, tensor.ScalarShape(), nil
	case len(s) == 2 && op.axis == 0:
		return lseLayout{1, s[0], s[1]}, tensor.Shape{s[1]}, nil
	case len(s) == 2 && op.axis == 1:
		return lseLayout{s[0], s[1], 1}, tensor.Shape{s[0]}, nil
	}
	return lseLayout{}, nil, fmt.Errorf("ops: LogSumExp: axis %d unsupported for shape %v (want AllAxes, or 0 or 1 of a matrix)", op.axis, s)
}

// logSumExpOp is y = log Σ_axis exp(x).
type logSumExpOp struct {
	matOp
	axis, dims int
}

func (op logSumExpOp) outDims() int {
	if op.axis == AllAxes {
		return 0
	}
	return op.dims - 1
}

func (op logSumExpOp) Arity() int { return 1 }
func (op logSumExpOp) Type() hm.Type {
	return hm.NewFnType(tensorType(op.dims), tensorType(op.outDims()))
}
func (op logSumExpOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	_, out, err := op.layout(s[0])
	return out, err
}
func (op logSumExpOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op logSumExpOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op logSumExpOp) Hashcode() uint32                               { return hashOf(op) }
func (op logSumExpOp) String() string {
	return fmt.Sprintf("LogSumExp{axis=%d,%dd}", op.axis, op.dims)
}
func (op logSumExpOp) DiffWRT(int) []bool { return []bool{true} }
func (op logSumExpOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	xbar, err := gorgonia.ApplyOp(logSumExpGradOp{fwd: op}, in[0], out, grad)
	return gorgonia.Nodes{xbar}, err
}

// Lower implements ad.Lowerer.
func (op logSumExpOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("ops: LogSumExp: got %d inputs, want 1", len(in))
	}
	l, _, err := op.layout(in[0])
	if err != nil {
		return nil, err
	}
	return logSumExpKernel{l}, nil
}

type logSumExpKernel struct{ lseLayout }

func (k logSumExpKernel) Eval(out []float64, in [][]float64) error {
	if len(in) != 1 || len(in[0]) != k.outer*k.red*k.inner || len(out) != k.outer*k.inner {
		return errBufferSize
	}
	x := in[0]
	for o := 0; o < k.outer; o++ {
		for i := 0; i < k.inner; i++ {
			base := o*k.red*k.inner + i
			m := math.Inf(-1)
			for r := 0; r < k.red; r++ {
				if v := x[base+r*k.inner]; v > m || math.IsNaN(v) {
					m = v
				}
			}
			if math.IsInf(m, 0) || math.IsNaN(m) {
				// All −Inf, some +Inf, or NaN: the max is the answer.
				out[o*k.inner+i] = m
				continue
			}
			var s float64
			for r := 0; r < k.red; r++ {
				s += math.Exp(x[base+r*k.inner] - m)
			}
			out[o*k.inner+i] = m + math.Log(s)
		}
	}
	return nil
}

// logSumExpGradOp is x̄ = ȳ·exp(x − y) from (x, y, ȳ), the softmax weights.
type logSumExpGradOp struct {
	gradOp
	fwd logSumExpOp
}

func (op logSumExpGradOp) Arity() int { return 3 }
func (op logSumExpGradOp) Type() hm.Type {
	tx, ty := tensorType(op.fwd.dims), tensorType(op.fwd.outDims())
	return hm.NewFnType(tx, ty, ty, tx)
}
func (op logSumExpGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	_, out, err := op.fwd.layout(s[0])
	if err != nil {
		return nil, err
	}
	if s[1].TotalSize() != out.TotalSize() || s[2].TotalSize() != out.TotalSize() {
		return nil, fmt.Errorf("ops: LogSumExpGrad: shapes %v, want %v", s, out)
	}
	return s[0].Clone(), nil
}
func (op logSumExpGradOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) {
	return doWithKernel(op, v)
}
func (op logSumExpGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op logSumExpGradOp) Hashcode() uint32      { return hashOf(op) }
func (op logSumExpGradOp) String() string        { return op.fwd.String() + "Grad" }

// Lower implements ad.Lowerer.
func (op logSumExpGradOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("ops: LogSumExpGrad: got %d inputs, want 3", len(in))
	}
	if _, err := op.InferShape(in[0], in[1], in[2]); err != nil {
		return nil, err
	}
	l, _, _ := op.fwd.layout(in[0])
	return logSumExpGradKernel{l}, nil
}

type logSumExpGradKernel struct{ lseLayout }

func (k logSumExpGradKernel) Eval(out []float64, in [][]float64) error {
	n, no := k.outer*k.red*k.inner, k.outer*k.inner
	if len(in) != 3 || len(in[0]) != n || len(in[1]) != no || len(in[2]) != no || len(out) != n {
		return errBufferSize
	}
	x, y, g := in[0], in[1], in[2]
	for o := 0; o < k.outer; o++ {
		for i := 0; i < k.inner; i++ {
			yi, gi := y[o*k.inner+i], g[o*k.inner+i]
			base := o*k.red*k.inner + i
			for r := 0; r < k.red; r++ {
				j := base + r*k.inner
				w := 0.0
				if !math.IsInf(yi, -1) {
					w = math.Exp(x[j] - yi)
				}
				out[j] = gi * w
			}
		}
	}
	return nil
}
