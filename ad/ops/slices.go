package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
)

// Slice is gorgonia.Slice with a correct node hash: it takes the same
// arguments and builds a node of the same shape and values. gorgonia
// v0.9.18 hashes a slice's bounds as single bytes, so gorgonia.Slice(x,
// S(0)) and gorgonia.Slice(x, S(256)) return one merged node (see package
// ad, which refuses gorgonia slices where that can happen); Slice's nodes
// hash every bound in full. Its gradient is a slice-increment op with the
// same full hash, and ad.Compile lowers both as it lowers gorgonia's own:
// a contiguous slice is a view, and the gradients of many slices of one
// tensor are one scatter into a single buffer.
func Slice(x *gorgonia.Node, slices ...tensor.Slice) (*gorgonia.Node, error) {
	if err := checkNodes("Slice", x); err != nil {
		return nil, err
	}
	if x.IsScalar() {
		return nil, fmt.Errorf("ops: Slice: %q is a scalar", x.Name())
	}
	if len(slices) > x.Dims() {
		return nil, fmt.Errorf("ops: Slice: %d slices of %q, which has shape %v", len(slices), x.Name(), x.Shape())
	}
	// One op per axis, each on the previous result, as gorgonia.Slice
	// does: an axis taken at one index is dropped, which shifts the next.
	y := x
	dropped := 0
	for i, s := range slices {
		if i > 0 {
			if prev := slices[i-1]; prev != nil && prev.End()-prev.Start() == 1 {
				dropped++
			}
		}
		op := newAxisSlice(s, i-dropped, y.Dims())
		if _, err := y.Shape().S(op.slices()...); err != nil {
			return nil, fmt.Errorf("ops: Slice: slice %d of %q (shape %v): %w", i, x.Name(), x.Shape(), err)
		}
		var err error
		if y, err = gorgonia.ApplyOp(op, y); err != nil {
			return nil, fmt.Errorf("ops: Slice: %w", err)
		}
	}
	return y, nil
}

// Concat is gorgonia.Concat whose gradient slices with Slice's op, so
// that the gradients of pieces 256 elements apart are not merged (see
// Slice); it takes the same arguments and builds the same values.
func Concat(axis int, xs ...*gorgonia.Node) (*gorgonia.Node, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("ops: Concat: no nodes")
	}
	if err := checkNodes("Concat", xs...); err != nil {
		return nil, err
	}
	d := xs[0].Dims()
	for i, x := range xs {
		if x.Dims() != d || d == 0 {
			return nil, fmt.Errorf("ops: Concat: argument %d %q has shape %v, want a tensor of %d dimensions like argument 0", i, x.Name(), x.Shape(), max(d, 1))
		}
	}
	if axis < 0 || axis >= d {
		return nil, fmt.Errorf("ops: Concat: axis %d of tensors of %d dimensions", axis, d)
	}
	y, err := gorgonia.ApplyOp(concatAxisOp{axis: axis, d: d, n: len(xs)}, xs...)
	if err != nil {
		return nil, fmt.Errorf("ops: Concat: %w", err)
	}
	return y, nil
}

// axisSlice takes the elements start, start+step, … < end along one axis
// of a tensor of d dimensions (all: the whole axis), with the meaning of
// gorgonia's sliceOp; its hash holds every field in full.
type axisSlice struct {
	start, end, step int
	all              bool
	along, d         int
}

func newAxisSlice(s tensor.Slice, along, d int) axisSlice {
	op := axisSlice{along: along, d: d, all: s == nil || s.End() <= s.Start()}
	if !op.all {
		op.start, op.end, op.step = s.Start(), s.End(), s.Step()
	}
	return op
}

// slices is the argument of tensor's Slice for a tensor of op.d dimensions.
func (op axisSlice) slices() []tensor.Slice {
	ss := make([]tensor.Slice, op.d)
	if !op.all {
		ss[op.along] = gorgonia.S(op.start, op.end, op.step)
	}
	return ss
}

// Moves implements ad.Mover.
func (op axisSlice) Moves() ad.Movement { return ad.MoveSlice }

func (op axisSlice) Arity() int { return 1 }

// Type follows gorgonia's sliceOp: one index of an axis drops it.
func (op axisSlice) Type() hm.Type {
	if !op.all && op.end-op.start == 1 {
		return hm.NewFnType(tensorType(op.d), tensorType(op.d-1))
	}
	return hm.NewFnType(tensorType(op.d), tensorType(op.d))
}

func (op axisSlice) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOfN(op, in, 1)
	if err != nil {
		return nil, err
	}
	return s[0].S(op.slices()[:op.along+1]...)
}

func (op axisSlice) Do(v ...gorgonia.Value) (gorgonia.Value, error) {
	if len(v) != 1 {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want 1", op, len(v))
	}
	t, ok := v[0].(tensor.Tensor)
	if !ok || t.Dtype() != tensor.Float64 {
		return nil, fmt.Errorf("ops: %v: input %T, want a float64 tensor", op, v[0])
	}
	w, err := t.Slice(op.slices()...)
	if err != nil {
		return nil, fmt.Errorf("ops: %v: %w", op, err)
	}
	if w.IsScalar() {
		f, ok := w.ScalarValue().(float64)
		if !ok {
			return nil, fmt.Errorf("ops: %v: scalar of type %T", op, w.ScalarValue())
		}
		return gorgonia.NewF64(f), nil
	}
	return tensor.Materialize(w), nil
}

func (op axisSlice) ReturnsPtr() bool      { return false }
func (op axisSlice) CallsExtern() bool     { return false }
func (op axisSlice) OverwritesInput() int  { return -1 }
func (op axisSlice) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op axisSlice) Hashcode() uint32      { return hashOf(op) }
func (op axisSlice) String() string {
	if op.all {
		return fmt.Sprintf("Slice{axis %d of %d: all}", op.along, op.d)
	}
	return fmt.Sprintf("Slice{axis %d of %d: %d:%d:%d}", op.along, op.d, op.start, op.end, op.step)
}
func (op axisSlice) DiffWRT(int) []bool { return []bool{true} }
func (op axisSlice) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("ops: %v: %d inputs", op, len(in))
	}
	g, err := gorgonia.ApplyOp(axisSliceGrad{gradOp{}, op}, in[0], grad)
	return gorgonia.Nodes{g}, err
}

// axisSliceGrad(x, g) is the gradient of y = axisSlice(x): zero of x's shape
// with g added at the slice's positions; x's values are not read.
type axisSliceGrad struct {
	gradOp
	s axisSlice
}

// Moves implements ad.Mover.
func (op axisSliceGrad) Moves() ad.Movement { return ad.MoveSliceGrad }

func (op axisSliceGrad) Arity() int { return 2 }
func (op axisSliceGrad) Type() hm.Type {
	out := tensorType(op.s.d)
	if !op.s.all && op.s.end-op.s.start == 1 {
		return hm.NewFnType(out, tensorType(op.s.d-1), out)
	}
	return hm.NewFnType(out, out, out)
}
func (op axisSliceGrad) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOfN(op, in, 2)
	if err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}
func (op axisSliceGrad) Do(v ...gorgonia.Value) (gorgonia.Value, error) {
	if len(v) != 2 {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want 2", op, len(v))
	}
	x, ok := v[0].(tensor.Tensor)
	if !ok || x.Dtype() != tensor.Float64 {
		return nil, fmt.Errorf("ops: %v: input %T, want a float64 tensor", op, v[0])
	}
	g, gs, err := flat(v[1])
	if err != nil {
		return nil, fmt.Errorf("ops: %v: %w", op, err)
	}
	// Slice a tensor of positions 0, 1, … to learn where g's elements go.
	n := x.Shape().TotalSize()
	pos := make([]float64, n)
	for i := range pos {
		pos[i] = float64(i)
	}
	pv, err := op.s.Do(tensor.New(tensor.WithShape(x.Shape().Clone()...), tensor.WithBacking(pos)))
	if err != nil {
		return nil, err
	}
	at, _, err := flat(pv)
	if err != nil {
		return nil, fmt.Errorf("ops: %v: %w", op, err)
	}
	if len(at) != len(g) {
		return nil, fmt.Errorf("ops: %v: gradient of shape %v for a slice of %d elements", op, gs, len(at))
	}
	data := make([]float64, n)
	for k, i := range at {
		data[int(i)] += g[k]
	}
	out := tensor.New(tensor.WithShape(x.Shape().Clone()...), tensor.WithBacking(data))
	return out, nil
}
func (op axisSliceGrad) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op axisSliceGrad) Hashcode() uint32      { return hashOf(op) }
func (op axisSliceGrad) String() string        { return "Grad" + op.s.String() }

// concatAxisOp joins n tensors of d dimensions along axis, with the meaning
// of gorgonia's concatOp.
type concatAxisOp struct{ axis, d, n int }

// Moves implements ad.Mover.
func (op concatAxisOp) Moves() ad.Movement { return ad.MoveConcat }

func (op concatAxisOp) Arity() int { return op.n }
func (op concatAxisOp) Type() hm.Type {
	ts := make([]hm.Type, op.n+1)
	for i := range ts {
		ts[i] = tensorType(op.d)
	}
	return hm.NewFnType(ts...)
}
func (op concatAxisOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOfN(op, in, op.n)
	if err != nil {
		return nil, err
	}
	return s[0].Concat(op.axis, s[1:]...)
}
func (op concatAxisOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) {
	if len(v) != op.n {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want %d", op, len(v), op.n)
	}
	ts := make([]tensor.Tensor, len(v))
	for i, x := range v {
		t, ok := x.(tensor.Tensor)
		if !ok {
			return nil, fmt.Errorf("ops: %v: input %d is %T, want a tensor", op, i, x)
		}
		ts[i] = t
	}
	if len(ts) == 1 {
		return tensor.Materialize(ts[0]), nil
	}
	return tensor.Concat(op.axis, ts[0], ts[1:]...)
}
func (op concatAxisOp) ReturnsPtr() bool      { return false }
func (op concatAxisOp) CallsExtern() bool     { return false }
func (op concatAxisOp) OverwritesInput() int  { return -1 }
func (op concatAxisOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op concatAxisOp) Hashcode() uint32      { return hashOf(op) }
func (op concatAxisOp) String() string {
	return fmt.Sprintf("Concat{axis %d of %d, %d pieces}", op.axis, op.d, op.n)
}
func (op concatAxisOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

// SymDiff slices the output's gradient into the pieces' gradients, keeping
// a piece's axis of length one as gorgonia's concatOp does.
func (op concatAxisOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	res := make(gorgonia.Nodes, len(in))
	start := 0
	for i, x := range in {
		w := x.Shape()[op.axis]
		s := axisSlice{start: start, end: start + w, step: 1, along: op.axis, d: op.d}
		g, err := gorgonia.ApplyOp(s, grad)
		if err != nil {
			return nil, err
		}
		if w == 1 {
			if g, err = gorgonia.Reshape(g, x.Shape().Clone()); err != nil {
				return nil, err
			}
		}
		res[i] = g
		start += w
	}
	return res, nil
}
