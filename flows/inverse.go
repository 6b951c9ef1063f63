package flows

import (
	"errors"
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/internal/rqspline"
)

// layerInverseOp inverts one layer of the stack (the reverse permutation,
// then the MADE-conditioned splines) at one point: given the layer's output
// y (1, n) and its parameters W1, b1, W2, b2, W3, b3 it solves for the
// input coordinate by coordinate, computing for coordinate i only the block
// of hidden units of degree i (so the whole inverse costs about one forward
// pass), and returns (n+1): the layer's input, then the forward
// log-determinant of the layer at it. It lowers to a native kernel for ad;
// it has no gradient and no gorgonia Do.
//
// With a context (s.ctx > 0) it takes three more inputs: C1, C2 and the
// context (1, ctx), which feed every hidden unit.
type layerInverseOp struct{ s *stack }

func (op layerInverseOp) Arity() int {
	if op.s.ctx > 0 {
		return 10
	}
	return 7
}
func (op layerInverseOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	v := gorgonia.TensorType{Dims: 1, Of: a}
	if op.s.ctx > 0 {
		return hm.NewFnType(m, m, v, m, v, m, v, m, m, v, v)
	}
	return hm.NewFnType(m, m, v, m, v, m, v, v)
}
func (op layerInverseOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("flows: layer inverse: %d inputs", len(in))
	}
	return tensor.Shape{op.s.n + 1}, nil
}
func (op layerInverseOp) Do(...gorgonia.Value) (gorgonia.Value, error) {
	return nil, errors.New("flows: the layer inverse runs only in programs compiled by ad")
}
func (op layerInverseOp) ReturnsPtr() bool      { return false }
func (op layerInverseOp) CallsExtern() bool     { return false }
func (op layerInverseOp) OverwritesInput() int  { return -1 }
func (op layerInverseOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op layerInverseOp) Hashcode() uint32 {
	var h uint32 = 2166136261
	for _, c := range op.String() {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}
func (op layerInverseOp) String() string {
	s := op.s
	return fmt.Sprintf("MADESplineInverse{n=%d,hidden=%d,bins=%d}", s.n, s.hidden, s.bins)
}

// Lower implements ad.Lowerer.
func (op layerInverseOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	s := op.s
	h := s.hidden
	want := []int{s.n, h * s.n, h, h * h, h, s.out * h, s.out}
	if s.ctx > 0 {
		want = append(want, h*s.ctx, h*s.ctx, s.ctx)
	}
	if len(in) != len(want) {
		return nil, fmt.Errorf("flows: layer inverse: %d inputs", len(in))
	}
	for i, w := range want {
		if in[i].TotalSize() != w {
			return nil, fmt.Errorf("flows: layer inverse: input %d has shape %v", i, in[i])
		}
	}
	return &layerInverseKernel{s: s, w: s.newPointWork()}, nil
}

type layerInverseKernel struct {
	s *stack
	w *pointWork
}

// CloneKernel implements ad.Cloner.
func (k *layerInverseKernel) CloneKernel() ad.Kernel {
	return &layerInverseKernel{s: k.s, w: k.s.newPointWork()}
}

func (k *layerInverseKernel) Eval(out []float64, in [][]float64) error {
	s, w := k.s, k.w
	h, n, per := s.hidden, s.n, s.per
	y, w1, b1, w2, b2, w3, b3 := in[0], in[1], in[2], in[3], in[4], in[5], in[6]
	var c1, c2, ctx []float64
	if s.ctx > 0 {
		c1, c2, ctx = in[7], in[8], in[9]
	}
	x := w.a
	clear(x)
	ld := 0.0
	for i := 0; i < n; i++ {
		if a, b := s.start[i], s.start[i+1]; a < b {
			h1, h2 := w.h1[a:b], w.h2[a:b]
			copy(h1, b1[a:b])
			if i > 0 {
				blas64.Gemv(blas.NoTrans, 1, sub(w1, n, a, 0, b-a, i), vec(x[:i]), 1, vec(h1))
			}
			if ctx != nil {
				blas64.Gemv(blas.NoTrans, 1, sub(c1, s.ctx, a, 0, b-a, s.ctx), vec(ctx), 1, vec(h1))
			}
			relu(h1)
			copy(h2, b2[a:b])
			blas64.Gemv(blas.NoTrans, 1, sub(w2, h, a, 0, b-a, b), vec(w.h1[:b]), 1, vec(h2))
			if ctx != nil {
				blas64.Gemv(blas.NoTrans, 1, sub(c2, s.ctx, a, 0, b-a, s.ctx), vec(ctx), 1, vec(h2))
			}
			relu(h2)
		}
		o := w.o[i*per : (i+1)*per]
		copy(o, b3[i*per:(i+1)*per])
		if pr := s.start[i+1]; pr > 0 {
			blas64.Gemv(blas.NoTrans, 1, sub(w3, h, i*per, 0, per, pr), vec(w.h2[:pr]), 1, vec(o))
		}
		s.scaleLogits(o)
		uw, uh, ud := s.spline(w.o, i)
		xi, d := rqspline.Inverse(y[i], uw, uh, ud)
		x[i] = xi
		ld += d
	}
	reverseInto(out[:n], x)
	out[n] = ld
	return nil
}

// compileInverse compiles the single-point inverse z ↦ (T⁻¹(z),
// log|det J_T⁻¹(z)|) of an RQMA: the sigmoid, the stack's layers inverted
// in reverse order by layerInverseOp, the logit and the standardisation's
// inverse, reading the parameters in place.
func (f *RQMA) compileInverse() (*ad.Program, error) {
	s := f.net
	n := s.n
	b := &gb{g: gorgonia.NewGraph(), values: f.params}
	in := gorgonia.NewMatrix(b.g, tensor.Float64, gorgonia.WithShape(1, n), gorgonia.WithName("z"))
	// y = σ(c·z), with the forward logit's log-derivative at y, computed
	// from z to keep precision in the tails.
	cz := b.n(gorgonia.Mul(in, b.scalar(f.c)))
	y := b.n(gorgonia.Sigmoid(cz))
	l1 := b.n(ops.LogSigmoid(cz))
	l2 := b.n(ops.LogSigmoid(b.n(gorgonia.Neg(cz))))
	ld := b.n(gorgonia.Sub(b.n(gorgonia.Neg(b.rowSum(b.n(gorgonia.Add(l1, l2))))), b.scalar(float64(n)*math.Log(f.c))))
	var ldl *gorgonia.Node
	y, ldl = s.inverseGraph(b, y, nil)
	ld = b.n(gorgonia.Add(ld, ldl))
	if b.err != nil {
		return nil, fmt.Errorf("flows: building the RQMA inverse graph: %w", b.err)
	}
	// v = h⁻¹(u) = logit(u)/c, with log h'(v); θ = shift + v/scale.
	v := b.n(gorgonia.Mul(b.n(gorgonia.Sub(b.n(gorgonia.Log(y)), b.n(gorgonia.Log1p(b.n(gorgonia.Neg(y)))))), b.scalar(1/f.c)))
	cv := b.n(gorgonia.Mul(v, b.scalar(f.c)))
	lv := b.n(gorgonia.Add(b.rowSum(b.n(gorgonia.Add(b.n(ops.LogSigmoid(cv)), b.n(ops.LogSigmoid(b.n(gorgonia.Neg(cv))))))), b.scalar(float64(n)*math.Log(f.c))))
	a, c := make([]float64, n), make([]float64, n)
	ldStd := 0.0
	for i := range a {
		a[i], c[i] = 1/f.scale[i], f.shift[i]
		ldStd += math.Log(f.scale[i])
	}
	theta := b.n(gorgonia.Add(b.n(gorgonia.HadamardProd(v, Constant(a, 1, n))), Constant(c, 1, n)))
	ld = b.n(gorgonia.Add(b.n(gorgonia.Add(ld, lv)), b.scalar(ldStd)))
	ld = b.n(gorgonia.Neg(ld)) // log|det J_T⁻¹| = −log|det J_T| at θ
	return b.compileMap("RQMA inverse graph", in, theta, ld)
}

// inverseGraph adds the inverse of the stack at one point y (1, n), its
// layers inverted in reverse order by layerInverseOp, with the context ctx
// (1, ctx) or nil, and returns F⁻¹(y) and the stack's forward
// log-determinant at it.
func (s *stack) inverseGraph(b *gb, y, ctx *gorgonia.Node) (x, ld *gorgonia.Node) {
	n, h := s.n, s.hidden
	for l := s.layers - 1; l >= 0 && b.err == nil; l-- {
		q := l * s.size
		args := []*gorgonia.Node{y, b.view(q+s.oW1, h, n), b.view(q+s.oB1, h), b.view(q+s.oW2, h, h), b.view(q+s.oB2, h),
			b.view(q+s.oW3, s.out, h), b.view(q+s.oB3, s.out)}
		if s.ctx > 0 {
			args = append(args, b.view(q+s.oC1, h, s.ctx), b.view(q+s.oC2, h, s.ctx), b.n(gorgonia.Reshape(ctx, tensor.Shape{s.ctx})))
		}
		if b.err != nil {
			break
		}
		packed := b.n(gorgonia.ApplyOp(layerInverseOp{s}, args...))
		if b.err != nil {
			break
		}
		u := b.n(ops.Slice(packed, gorgonia.S(0, n)))
		ldl := b.n(ops.Slice(packed, gorgonia.S(n)))
		if b.err != nil {
			break
		}
		y = b.n(gorgonia.Reshape(u, tensor.Shape{1, n}))
		if ld == nil {
			ld = ldl
		} else {
			ld = b.n(gorgonia.Add(ld, ldl))
		}
	}
	return y, ld
}
