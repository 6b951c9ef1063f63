package ops

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
)

// BernoulliLogitGLM returns the log-likelihood of a logistic regression
// without intercept,
//
//	Σ_i y_i η_i − log(1 + exp(η_i)),  η = Xβ,
//
// as one fused op: x is the n×d design matrix, beta the d coefficients and y
// the n outcomes, each 0 or 1 (any other value makes Do and the kernel
// return ErrDomain). The softplus is computed stably for either sign of η.
//
// Only beta is differentiable: x and y are data. The native kernel computes
// the value and the gradient Xᵀ(y − σ(η)) together, in one pass: one
// matrix-vector product each way and one exp per observation, as a
// hand-written log-density would. The gradient travels to the backward pass
// in the op's own output, so it is as safe under ad.Program.Clone as any
// other value; the price is that a value-only evaluation
// (ad.Program.LogDensity) computes it too. For a model with an intercept α,
// append a column of ones to x and α to beta (gorgonia.Concat).
func BernoulliLogitGLM(x, beta, y *gorgonia.Node) (*gorgonia.Node, error) {
	if err := checkNodes("BernoulliLogitGLM", x, beta, y); err != nil {
		return nil, err
	}
	op := glmOp{}
	packedShape, err := op.InferShape(x.Shape(), beta.Shape(), y.Shape())
	if err != nil {
		return nil, err
	}
	packed, err := gorgonia.ApplyOp(op, x, beta, y)
	if err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(sliceOp{off: 0, in: packedShape, out: tensor.ScalarShape()}, packed)
}

// glmDims validates the shapes of (x, beta, y) and returns n and d.
func glmDims(name string, x, beta, y tensor.Shape) (n, d int, err error) {
	if len(x) != 2 || x[0] < 1 || x[1] < 1 {
		return 0, 0, fmt.Errorf("ops: %s: x has shape %v, want a non-empty matrix", name, x)
	}
	n, d = x[0], x[1]
	if len(beta) != 1 || beta[0] != d {
		return 0, 0, fmt.Errorf("ops: %s: beta has shape %v, want (%d) to match x %v", name, beta, d, x)
	}
	if len(y) != 1 || y[0] != n {
		return 0, 0, fmt.Errorf("ops: %s: y has shape %v, want (%d) to match x %v", name, y, n, x)
	}
	return n, d, nil
}

// glmOp maps (X, β, y) to the packed vector (ℓ, ∇_β ℓ) of length d+1, where
// ℓ = Σ y⊙Xβ − softplus(Xβ). BernoulliLogitGLM exposes only ℓ, through a
// sliceOp, so the output gradient reaching glmOp's SymDiff is always zero
// beyond its first entry.
type glmOp struct{ matOp }

func (op glmOp) Arity() int { return 3 }
func (op glmOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(1), tensorType(1), tensorType(1))
}
func (op glmOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if len(s) != 3 {
		return nil, fmt.Errorf("ops: BernoulliLogitGLM: got %d inputs, want 3", len(s))
	}
	_, d, err := glmDims("BernoulliLogitGLM", s[0], s[1], s[2])
	if err != nil {
		return nil, err
	}
	return tensor.Shape{d + 1}, nil
}
func (op glmOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op glmOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op glmOp) Hashcode() uint32                               { return hashOf(op) }
func (op glmOp) String() string                                 { return "BernoulliLogitGLM" }

// DiffWRT: X and y are data.
func (op glmOp) DiffWRT(int) []bool { return []bool{false, true, false} }
func (op glmOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("ops: BernoulliLogitGLM: got %d inputs, want 3", len(in))
	}
	b, err := gorgonia.ApplyOp(glmGradOp{}, out, grad)
	return gorgonia.Nodes{nil, b, nil}, err
}

// Lower implements ad.Lowerer.
func (op glmOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("ops: BernoulliLogitGLM: got %d inputs, want 3", len(in))
	}
	n, d, err := glmDims("BernoulliLogitGLM", in[0], in[1], in[2])
	if err != nil {
		return nil, err
	}
	return &glmKernel{n: n, d: d, r: make([]float64, n)}, nil
}

// glmKernel keeps η, then the residuals, as scratch, so each Program clone
// needs its own.
type glmKernel struct {
	n, d int
	r    []float64
}

// CloneKernel implements ad.Cloner.
func (k *glmKernel) CloneKernel() ad.Kernel {
	return &glmKernel{n: k.n, d: k.d, r: make([]float64, k.n)}
}

func (k *glmKernel) Eval(out []float64, in [][]float64) error {
	if len(in) != 3 || len(in[0]) != k.n*k.d || len(in[1]) != k.d || len(in[2]) != k.n || len(out) != k.d+1 || len(k.r) != k.n {
		return errBufferSize
	}
	x, y := in[0], in[2]
	xm := blas64.General{Rows: k.n, Cols: k.d, Stride: k.d, Data: x}
	blas64.Gemv(blas.NoTrans, 1, xm, blas64.Vector{N: k.d, Inc: 1, Data: in[1]}, 0, blas64.Vector{N: k.n, Inc: 1, Data: k.r})
	var s float64
	for i, e := range k.r {
		yi := y[i]
		if yi != 0 && yi != 1 {
			return ErrDomain
		}
		// log(1 + e^η) and σ(η) from one exp of −|η|, which never
		// overflows.
		t := math.Exp(-math.Abs(e))
		sp, sig := math.Log1p(t), 1/(1+t)
		if e > 0 {
			sp += e
		} else {
			sig = t * sig
		}
		s += yi*e - sp
		k.r[i] = yi - sig
	}
	out[0] = s
	blas64.Gemv(blas.Trans, 1, xm, blas64.Vector{N: k.n, Inc: 1, Data: k.r}, 0, blas64.Vector{N: k.d, Inc: 1, Data: out[1:]})
	return nil
}

// errGLMPacked is returned if a graph differentiates through the gradient
// entries of glmOp's packed output, which BernoulliLogitGLM never exposes.
var errGLMPacked = errors.New("ops: BernoulliLogitGLM: only the log-likelihood entry of the packed output is differentiable")

// glmGradOp is β̄ = ḡ₀·∇_β ℓ from glmOp's packed output (ℓ, ∇_β ℓ) and its
// output gradient ḡ. It reads the gradient the forward kernel already
// computed, through the graph rather than through shared kernel state, so
// clones stay independent.
type glmGradOp struct{ matOp }

func (op glmGradOp) Arity() int { return 2 }
func (op glmGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(1), tensorType(1), tensorType(1))
}
func (op glmGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if len(s) != 2 || len(s[0]) != 1 || s[0][0] < 2 || !s[1].Eq(s[0]) {
		return nil, fmt.Errorf("ops: BernoulliLogitGLMGrad: shapes %v, want two equal vectors of length at least 2", s)
	}
	return tensor.Shape{s[0][0] - 1}, nil
}
func (op glmGradOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op glmGradOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op glmGradOp) Hashcode() uint32                               { return hashOf(op) }
func (op glmGradOp) String() string                                 { return "BernoulliLogitGLMGrad" }
func (op glmGradOp) DiffWRT(int) []bool                             { return []bool{false, false} }
func (op glmGradOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, errNotDifferentiable
}

// Lower implements ad.Lowerer.
func (op glmGradOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("ops: BernoulliLogitGLMGrad: got %d inputs, want 2", len(in))
	}
	if _, err := op.InferShape(in[0], in[1]); err != nil {
		return nil, err
	}
	return glmGradKernel{d: in[0][0] - 1}, nil
}

type glmGradKernel struct{ d int }

func (k glmGradKernel) Eval(out []float64, in [][]float64) error {
	if len(in) != 2 || len(in[0]) != k.d+1 || len(in[1]) != k.d+1 || len(out) != k.d {
		return errBufferSize
	}
	g := in[1]
	for _, v := range g[1:] {
		if v != 0 {
			return errGLMPacked
		}
	}
	for j, v := range in[0][1:] {
		out[j] = g[0] * v
	}
	return nil
}
