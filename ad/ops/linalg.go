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

// Cholesky returns the lower-triangular factor L, with zeros above the
// diagonal, of the symmetric positive-definite matrix (a+aᵀ)/2, so that
// LLᵀ = (a+aᵀ)/2. Evaluating it on a matrix that is not positive definite
// returns ErrNotPositiveDefinite.
func Cholesky(a *gorgonia.Node) (*gorgonia.Node, error) {
	if err := checkNodes("Cholesky", a); err != nil {
		return nil, err
	}
	if _, err := matrixSide("Cholesky", a.Shape()); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(choleskyOp{}, a)
}

// LogDetSPD returns the log-determinant of the symmetric positive-definite
// matrix (a+aᵀ)/2, computed as 2 Σ log L_ii from its Cholesky factor. Its
// gradient with respect to a is ḡ·a⁻¹. Evaluating it on a matrix that is not
// positive definite returns ErrNotPositiveDefinite.
//
// The node it returns is built on Cholesky(a), and gorgonia merges identical
// nodes: a graph that also calls Cholesky(a), say for a solve, factors a
// once, and its gradient runs one Cholesky backward pass for both uses.
func LogDetSPD(a *gorgonia.Node) (*gorgonia.Node, error) {
	l, err := Cholesky(a)
	if err != nil {
		return nil, fmt.Errorf("ops: LogDetSPD: %w", err)
	}
	return gorgonia.ApplyOp(logDetTriOp{}, l)
}

// SolveTriangular returns x solving T x = b, where T is the lower triangle of
// the n×n matrix t if lower is true and its upper triangle otherwise; the
// other triangle of t is never read. b is a vector of length n or an n×m
// matrix, and x has b's shape. A zero on the diagonal of t makes evaluation
// return ErrSingular.
func SolveTriangular(t, b *gorgonia.Node, lower bool) (*gorgonia.Node, error) {
	if err := checkNodes("SolveTriangular", t, b); err != nil {
		return nil, err
	}
	op := solveOp{lower: lower, bDims: b.Dims()}
	if _, err := op.InferShape(t.Shape(), b.Shape()); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(op, t, b)
}

// matOp holds the gorgonia.Op methods shared by the matrix ops.
type matOp struct{}

func (matOp) ReturnsPtr() bool     { return false }
func (matOp) CallsExtern() bool    { return false }
func (matOp) OverwritesInput() int { return -1 }

var errNotDifferentiable = errors.New("ops: gradient ops are not differentiable further")

// gradOp is a matOp that computes a gradient: it is not differentiated
// again (DiffWRT false for every input, SymDiff an error).
type gradOp struct{ matOp }

func (gradOp) DiffWRT(n int) []bool { return make([]bool, n) }
func (gradOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, errNotDifferentiable
}

// choleskyOp is L = chol((A+Aᵀ)/2).
type choleskyOp struct{ matOp }

func (op choleskyOp) Arity() int    { return 1 }
func (op choleskyOp) Type() hm.Type { return hm.NewFnType(tensorType(2), tensorType(2)) }
func (op choleskyOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if _, err := matrixSide("Cholesky", s[0]); err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}
func (op choleskyOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op choleskyOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op choleskyOp) Hashcode() uint32                               { return hashOf(op) }
func (op choleskyOp) String() string                                 { return "Cholesky" }
func (op choleskyOp) DiffWRT(int) []bool                             { return []bool{true} }
func (op choleskyOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	abar, err := gorgonia.ApplyOp(choleskyGradOp{}, out, grad)
	return gorgonia.Nodes{abar}, err
}

// Lower implements ad.Lowerer.
func (op choleskyOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("ops: Cholesky: got %d inputs, want 1", len(in))
	}
	n, err := matrixSide("Cholesky", in[0])
	if err != nil {
		return nil, err
	}
	return choleskyKernel{n}, nil
}

type choleskyKernel struct{ n int }

func (k choleskyKernel) Eval(out []float64, in [][]float64) error {
	nn := k.n * k.n
	if len(in) != 1 || len(in[0]) != nn || len(out) != nn {
		return errBufferSize
	}
	return choleskyInto(out, in[0], k.n)
}

// choleskyGradOp is Ā from (L, L̄); see choleskyGradInto.
type choleskyGradOp struct{ gradOp }

func (op choleskyGradOp) Arity() int { return 2 }
func (op choleskyGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(2), tensorType(2))
}
func (op choleskyGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if _, err := matrixSide("choleskyGrad", s[0]); err != nil {
		return nil, err
	}
	if !s[0].Eq(s[1]) {
		return nil, fmt.Errorf("ops: choleskyGrad: shapes %v and %v differ", s[0], s[1])
	}
	return s[0].Clone(), nil
}
func (op choleskyGradOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) {
	return doWithKernel(op, v)
}
func (op choleskyGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op choleskyGradOp) Hashcode() uint32      { return hashOf(op) }
func (op choleskyGradOp) String() string        { return "CholeskyGrad" }

// Lower implements ad.Lowerer.
func (op choleskyGradOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("ops: choleskyGrad: got %d inputs, want 2", len(in))
	}
	if _, err := op.InferShape(in[0], in[1]); err != nil {
		return nil, err
	}
	n := in[0][0]
	return &choleskyGradKernel{n: n, p: make([]float64, n*n)}, nil
}

type choleskyGradKernel struct {
	n int
	p []float64
}

func (k *choleskyGradKernel) Eval(out []float64, in [][]float64) error {
	nn := k.n * k.n
	if len(in) != 2 || len(in[0]) != nn || len(in[1]) != nn || len(out) != nn {
		return errBufferSize
	}
	return choleskyGradInto(out, in[0], in[1], k.p, k.n)
}

// SymmetricOutput implements ad.Symmetric: Ā is written as (G+Gᵀ)/2, each
// pair of elements from one value.
func (k *choleskyGradKernel) SymmetricOutput() bool { return true }

// CloneKernel implements ad.Cloner: each clone needs its own scratch.
func (k *choleskyGradKernel) CloneKernel() ad.Kernel {
	return &choleskyGradKernel{n: k.n, p: make([]float64, len(k.p))}
}

// logDetTriOp is 2 Σ log L_ii for a Cholesky factor L. LogDetSPD(A) applies
// it to Cholesky(A); gorgonia merges identical nodes, so a graph that also
// factors A for a solve shares one factorisation, and one choleskyGrad
// carries both gradients back to A.
type logDetTriOp struct{ matOp }

func (op logDetTriOp) Arity() int    { return 1 }
func (op logDetTriOp) Type() hm.Type { return hm.NewFnType(tensorType(2), tensorType(0)) }
func (op logDetTriOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if _, err := matrixSide("LogDetSPD", s[0]); err != nil {
		return nil, err
	}
	return tensor.ScalarShape(), nil
}
func (op logDetTriOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op logDetTriOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op logDetTriOp) Hashcode() uint32                               { return hashOf(op) }
func (op logDetTriOp) String() string                                 { return "LogDetCholesky" }
func (op logDetTriOp) DiffWRT(int) []bool                             { return []bool{true} }
func (op logDetTriOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	lbar, err := gorgonia.ApplyOp(logDetTriGradOp{}, in[0], grad)
	return gorgonia.Nodes{lbar}, err
}

// Lower implements ad.Lowerer.
func (op logDetTriOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("ops: LogDetSPD: got %d inputs, want 1", len(in))
	}
	n, err := matrixSide("LogDetSPD", in[0])
	if err != nil {
		return nil, err
	}
	return logDetTriKernel{n}, nil
}

type logDetTriKernel struct{ n int }

func (k logDetTriKernel) Eval(out []float64, in [][]float64) error {
	if len(in) != 1 || len(in[0]) != k.n*k.n || len(out) != 1 {
		return errBufferSize
	}
	l := in[0]
	for i := 0; i < k.n; i++ {
		if !(l[i*k.n+i] > 0) {
			return ErrNotPositiveDefinite
		}
	}
	out[0] = logDetFromCholesky(l, k.n)
	return nil
}

// logDetTriGradOp is L̄ = diag(2ḡ/L_ii) from (L, ḡ).
type logDetTriGradOp struct{ gradOp }

func (op logDetTriGradOp) Arity() int { return 2 }
func (op logDetTriGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(0), tensorType(2))
}
func (op logDetTriGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if _, err := matrixSide("LogDetSPDGrad", s[0]); err != nil {
		return nil, err
	}
	if s[1].TotalSize() != 1 {
		return nil, fmt.Errorf("ops: LogDetSPDGrad: gradient has shape %v, want a scalar", s[1])
	}
	return s[0].Clone(), nil
}
func (op logDetTriGradOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) {
	return doWithKernel(op, v)
}
func (op logDetTriGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op logDetTriGradOp) Hashcode() uint32      { return hashOf(op) }
func (op logDetTriGradOp) String() string        { return "LogDetCholeskyGrad" }

// Lower implements ad.Lowerer.
func (op logDetTriGradOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("ops: LogDetSPDGrad: got %d inputs, want 2", len(in))
	}
	if _, err := op.InferShape(in[0], in[1]); err != nil {
		return nil, err
	}
	return logDetTriGradKernel{in[0][0]}, nil
}

type logDetTriGradKernel struct{ n int }

func (k logDetTriGradKernel) Eval(out []float64, in [][]float64) error {
	nn := k.n * k.n
	if len(in) != 2 || len(in[0]) != nn || len(in[1]) != 1 || len(out) != nn {
		return errBufferSize
	}
	l, g := in[0], 2*in[1][0]
	for i := range out {
		out[i] = 0
	}
	for i := 0; i < k.n; i++ {
		d := l[i*k.n+i]
		if !(d > 0) {
			return ErrNotPositiveDefinite
		}
		out[i*k.n+i] = g / d
	}
	return nil
}

// solveOp is x = T⁻¹b (or T⁻ᵀb if trans) for the lower or upper triangle T.
// trans is used only by the gradient.
type solveOp struct {
	matOp
	lower, trans bool
	bDims        int
}

// solveShapes validates (t, b) and returns n and the number of right-hand
// sides m.
func solveShapes(t, b tensor.Shape) (n, m int, err error) {
	n, err = matrixSide("SolveTriangular", t)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case len(b) == 1 && b[0] == n:
		return n, 1, nil
	case len(b) == 2 && b[0] == n && b[1] >= 1:
		return n, b[1], nil
	}
	return 0, 0, fmt.Errorf("ops: SolveTriangular: right-hand side has shape %v, want (%d) or (%d, m)", b, n, n)
}

func (op solveOp) Arity() int { return 2 }
func (op solveOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(op.bDims), tensorType(op.bDims))
}
func (op solveOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if _, _, err := solveShapes(s[0], s[1]); err != nil {
		return nil, err
	}
	return s[1].Clone(), nil
}
func (op solveOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op solveOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op solveOp) Hashcode() uint32                               { return hashOf(op) }
func (op solveOp) String() string {
	return fmt.Sprintf("SolveTriangular{lower=%t,trans=%t,%dd}", op.lower, op.trans, op.bDims)
}
func (op solveOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff: for T x = b, b̄ = T⁻ᵀ x̄ and T̄ = −mask(b̄ xᵀ); for Tᵀ x = b,
// b̄ = T⁻¹ x̄ and T̄ = −mask(x b̄ᵀ).
func (op solveOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	t := in[0]
	bbar, err := gorgonia.ApplyOp(solveOp{lower: op.lower, trans: !op.trans, bDims: op.bDims}, t, grad)
	if err != nil {
		return nil, err
	}
	u, v := bbar, out
	if op.trans {
		u, v = out, bbar
	}
	tbar, err := gorgonia.ApplyOp(triOuterOp{lower: op.lower, dims: op.bDims}, u, v)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{tbar, bbar}, nil
}

// Lower implements ad.Lowerer.
func (op solveOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("ops: SolveTriangular: got %d inputs, want 2", len(in))
	}
	n, m, err := solveShapes(in[0], in[1])
	if err != nil {
		return nil, err
	}
	// ad's own kernel.
	return ad.TriangularSolve{N: n, M: m, Lower: op.lower, Trans: op.trans, Singular: ErrSingular}, nil
}

// triOuterOp is −mask(u vᵀ), the gradient of a triangular solve with respect
// to its matrix.
type triOuterOp struct {
	gradOp
	lower bool
	dims  int
}

func (op triOuterOp) Arity() int { return 2 }
func (op triOuterOp) Type() hm.Type {
	return hm.NewFnType(tensorType(op.dims), tensorType(op.dims), tensorType(2))
}
func (op triOuterOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if !s[0].Eq(s[1]) || len(s[0]) < 1 || len(s[0]) > 2 {
		return nil, fmt.Errorf("ops: triOuter: shapes %v and %v", s[0], s[1])
	}
	return tensor.Shape{s[0][0], s[0][0]}, nil
}
func (op triOuterOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op triOuterOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op triOuterOp) Hashcode() uint32                               { return hashOf(op) }
func (op triOuterOp) String() string {
	return fmt.Sprintf("TriOuter{lower=%t,%dd}", op.lower, op.dims)
}

// Lower implements ad.Lowerer.
func (op triOuterOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("ops: triOuter: got %d inputs, want 2", len(in))
	}
	if _, err := op.InferShape(in[0], in[1]); err != nil {
		return nil, err
	}
	n := in[0][0]
	return triOuterKernel{n: n, m: in[0].TotalSize() / n, lower: op.lower}, nil
}

type triOuterKernel struct {
	n, m  int
	lower bool
}

func (k triOuterKernel) Eval(out []float64, in [][]float64) error {
	nm := k.n * k.m
	if len(in) != 2 || len(in[0]) != nm || len(in[1]) != nm || len(out) != k.n*k.n {
		return errBufferSize
	}
	triOuterInto(out, in[0], in[1], k.n, k.m, k.lower)
	return nil
}
