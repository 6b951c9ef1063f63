package ops

import (
	"errors"
	"fmt"
	"hash"

	"github.com/chewxy/hm"
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
// the value and the gradient Xᵀ(y − σ(η)) together, in one pass over X in
// blocks of rows that stay in the processor's cache between Xβ and Xᵀr,
// with AVX2/FMA row kernels where the processor has them, so it runs at a
// fraction of the cost of two matrix-vector products and n calls to exp and
// log1p. The gradient travels to the backward pass in the op's own output,
// so it is as safe under ad.Program.Clone as any other value; the price is
// that a value-only evaluation (ad.Program.LogDensity) computes it too. For
// a model with an intercept α, append a column of ones to x and α to beta
// (gorgonia.Concat).
//
// One evaluation may use several goroutines over blocks of rows; see
// ad.Program.SetWorkers. The result does not depend on their number.
func BernoulliLogitGLM(x, beta, y *gorgonia.Node) (*gorgonia.Node, error) {
	return applyGLM(glmBernoulliLogit, x, beta, y, nil)
}

// PoissonLogGLM returns the log-likelihood of a Poisson regression with the
// log link and no intercept,
//
//	Σ_i y_i η_i − exp(η_i) − log(y_i!),  η = Xβ,
//
// as one fused op, like BernoulliLogitGLM: x is n×d, beta has d entries and
// y holds n counts (non-negative integers; any other value makes Do and the
// kernel return ErrDomain). The constant Σ log(y_i!) is included, so the
// value is a normalised log-likelihood; the kernel recomputes it only when
// y changes. The gradient with respect to beta is Xᵀ(y − exp(η)).
func PoissonLogGLM(x, beta, y *gorgonia.Node) (*gorgonia.Node, error) {
	return applyGLM(glmPoissonLog, x, beta, y, nil)
}

// NormalIDGLM returns the log-likelihood of a linear regression with
// Gaussian noise of standard deviation sigma and no intercept,
//
//	Σ_i −½((y_i − η_i)/σ)² − n log σ − (n/2) log 2π,  η = Xβ,
//
// as one fused op, like BernoulliLogitGLM: x is n×d, beta has d entries, y
// has n and sigma is a scalar, which must be positive (otherwise Do and the
// kernel return ErrDomain). Both beta and sigma are differentiable:
// ∇_β = Xᵀ(y − η)/σ² and ∂/∂σ = (Σ(y − η)²/σ² − n)/σ.
func NormalIDGLM(x, beta, y, sigma *gorgonia.Node) (*gorgonia.Node, error) {
	if sigma == nil {
		return nil, errors.New("ops: NormalIDGLM: argument 3 is nil")
	}
	return applyGLM(glmNormalID, x, beta, y, sigma)
}

// glmFamily says how each row's linear predictor η_i enters the
// log-likelihood of a fused GLM op.
type glmFamily uint8

const (
	glmBernoulliLogit glmFamily = iota
	glmPoissonLog
	glmNormalID
)

// glmFamilyNames are the families' op names, which their ops' hashes use.
var glmFamilyNames = [...]string{
	glmBernoulliLogit: "BernoulliLogitGLM",
	glmPoissonLog:     "PoissonLogGLM",
	glmNormalID:       "NormalIDGLM",
}

func (f glmFamily) String() string { return enumName(glmFamilyNames[:], "glmFamily", uint8(f)) }

// hasScale reports whether the family takes a fourth, scalar argument.
func (f glmFamily) hasScale() bool { return f == glmNormalID }

// applyGLM applies the packed op and slices the log-likelihood out of it.
func applyGLM(fam glmFamily, x, beta, y, sigma *gorgonia.Node) (*gorgonia.Node, error) {
	args := []*gorgonia.Node{x, beta, y}
	if fam.hasScale() {
		args = append(args, sigma)
	}
	if err := checkNodes(fam.String(), args...); err != nil {
		return nil, err
	}
	op := glmOp{fam: fam}
	shapes := make([]gorgonia.DimSizer, len(args))
	for i, a := range args {
		shapes[i] = a.Shape()
	}
	packedShape, err := op.InferShape(shapes...)
	if err != nil {
		return nil, err
	}
	packed, err := gorgonia.ApplyOp(op, args...)
	if err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(sliceOp{off: 0, in: packedShape, out: tensor.ScalarShape()}, packed)
}

// glmDims validates the shapes of (x, beta, y[, sigma]) and returns n and d.
func glmDims(fam glmFamily, s []tensor.Shape) (n, d int, err error) {
	want := 3
	if fam.hasScale() {
		want = 4
	}
	if len(s) != want {
		return 0, 0, fmt.Errorf("ops: %v: got %d inputs, want %d", fam, len(s), want)
	}
	x, beta, y := s[0], s[1], s[2]
	if len(x) != 2 || x[0] < 1 || x[1] < 1 {
		return 0, 0, fmt.Errorf("ops: %v: x has shape %v, want a non-empty matrix", fam, x)
	}
	n, d = x[0], x[1]
	if len(beta) != 1 || beta[0] != d {
		return 0, 0, fmt.Errorf("ops: %v: beta has shape %v, want (%d) to match x %v", fam, beta, d, x)
	}
	if len(y) != 1 || y[0] != n {
		return 0, 0, fmt.Errorf("ops: %v: y has shape %v, want (%d) to match x %v", fam, y, n, x)
	}
	if fam.hasScale() && s[3].TotalSize() != 1 {
		return 0, 0, fmt.Errorf("ops: %v: sigma has shape %v, want a scalar", fam, s[3])
	}
	return n, d, nil
}

// glmOp maps (X, β, y[, σ]) to the packed vector (ℓ, ∇_β ℓ[, ∂ℓ/∂σ]) of
// length d+1 (+1 with σ). The exported constructors expose only ℓ, through
// a sliceOp, so the output gradient reaching glmOp's SymDiff is always zero
// beyond its first entry.
type glmOp struct {
	matOp
	fam glmFamily
}

func (op glmOp) Arity() int {
	if op.fam.hasScale() {
		return 4
	}
	return 3
}
func (op glmOp) Type() hm.Type {
	if op.fam.hasScale() {
		return hm.NewFnType(tensorType(2), tensorType(1), tensorType(1), typeVar, tensorType(1))
	}
	return hm.NewFnType(tensorType(2), tensorType(1), tensorType(1), tensorType(1))
}
func (op glmOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	_, d, err := glmDims(op.fam, s)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{op.packedLen(d)}, nil
}

// packedLen is the length of the packed output for d coefficients.
func (op glmOp) packedLen(d int) int {
	if op.fam.hasScale() {
		return d + 2
	}
	return d + 1
}

func (op glmOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op glmOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op glmOp) Hashcode() uint32                               { return hashOf(op) }
func (op glmOp) String() string                                 { return op.fam.String() }

// DiffWRT: X and y are data.
func (op glmOp) DiffWRT(n int) []bool {
	if op.fam.hasScale() {
		return []bool{false, true, false, true}
	}
	return []bool{false, true, false}
}
func (op glmOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want %d", op, len(in), op.Arity())
	}
	d := in[1].Shape().TotalSize()
	b, err := gorgonia.ApplyOp(glmGradOp{off: 1, n: d}, out, grad)
	if err != nil {
		return nil, err
	}
	if !op.fam.hasScale() {
		return gorgonia.Nodes{nil, b, nil}, nil
	}
	s, err := gorgonia.ApplyOp(glmGradOp{off: d + 1, n: 1, scalar: true}, out, grad)
	return gorgonia.Nodes{nil, b, nil, s}, err
}

// Lower implements ad.Lowerer.
func (op glmOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	n, d, err := glmDims(op.fam, in)
	if err != nil {
		return nil, err
	}
	return newGLMKernel(op.fam, n, d, 1), nil
}

// errGLMPacked is returned if a graph differentiates through the gradient
// entries of glmOp's packed output, which the constructors never expose.
var errGLMPacked = errors.New("ops: GLM: only the log-likelihood entry of the packed output is differentiable")

// glmGradOp is ḡ₀·(entries off … off+n−1) of glmOp's packed output
// (ℓ, ∇ℓ), with ḡ the packed output's gradient: the gradient of one
// argument. It reads what the forward kernel already computed, through the
// graph rather than through shared kernel state, so clones stay
// independent. With scalar set the result is a scalar (n is 1).
type glmGradOp struct {
	gradOp
	off, n int
	scalar bool
}

func (op glmGradOp) Arity() int { return 2 }
func (op glmGradOp) Type() hm.Type {
	if op.scalar {
		return hm.NewFnType(tensorType(1), tensorType(1), typeVar)
	}
	return hm.NewFnType(tensorType(1), tensorType(1), tensorType(1))
}
func (op glmGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if len(s) != 2 || len(s[0]) != 1 || !s[1].Eq(s[0]) || op.off < 1 || op.n < 1 || op.off+op.n > s[0][0] ||
		op.scalar && op.n != 1 {
		return nil, fmt.Errorf("ops: %v: shapes %v, want two equal vectors holding entries %d…%d", op, s, op.off, op.off+op.n-1)
	}
	if op.scalar {
		return tensor.ScalarShape(), nil
	}
	return tensor.Shape{op.n}, nil
}
func (op glmGradOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op glmGradOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op glmGradOp) Hashcode() uint32                               { return hashOf(op) }
func (op glmGradOp) String() string {
	return fmt.Sprintf("GLMGrad{%d,%d,%v}", op.off, op.n, op.scalar)
}

// Lower implements ad.Lowerer.
func (op glmGradOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want 2", op, len(in))
	}
	if _, err := op.InferShape(in[0], in[1]); err != nil {
		return nil, err
	}
	return packedGradKernel{off: op.off, n: op.n, packed: in[0][0], err: errGLMPacked}, nil
}
