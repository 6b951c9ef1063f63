package ops

import (
	"errors"
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
)

// Errors returned by Do and Kernel.Eval for inputs outside an op's domain.
// Kernels return them unwrapped so that the hot path never allocates.
var (
	// ErrNotPositiveDefinite is returned by Cholesky and LogDetSPD (and
	// their gradients) when the symmetric part of the matrix is not
	// positive definite.
	ErrNotPositiveDefinite = errors.New("ops: matrix is not positive definite")
	// ErrSingular is returned by SolveTriangular when the triangular matrix
	// has a zero (or non-finite) diagonal entry.
	ErrSingular = errors.New("ops: triangular matrix is singular")
	// ErrDomain is returned by elementwise ops when an element lies outside
	// the function's domain, for example atanh(2) or lgamma(-1).
	ErrDomain = errors.New("ops: argument outside the function's domain")
)

// AllAxes, passed as the axis of LogSumExp, reduces over every element.
const AllAxes = -1

// lowerer is what every op of this package implements besides gorgonia.Op.
type lowerer interface {
	gorgonia.Op
	Lower(in []tensor.Shape) (ad.Kernel, error)
}

// Every op lowers to a native kernel and is symbolically differentiable
// (gradient ops report DiffWRT false and refuse SymDiff).
var (
	_ lowerer = unaryOp{}
	_ lowerer = scaledOp{}
	_ lowerer = choleskyOp{}
	_ lowerer = choleskyGradOp{}
	_ lowerer = logDetTriOp{}
	_ lowerer = logDetTriGradOp{}
	_ lowerer = solveOp{}
	_ lowerer = triOuterOp{}
	_ lowerer = logSumExpOp{}
	_ lowerer = logSumExpGradOp{}
	_ lowerer = rqSplineOp{}
	_ lowerer = rqSplineGradOp{}
	_ lowerer = sliceOp{}
	_ lowerer = glmOp{}
	_ lowerer = glmGradOp{}
	_ lowerer = odeOp{}
	_ lowerer = odeGradOp{}
	_ lowerer = hmmOp{}
	_ lowerer = hmmGradOp{}

	_ gorgonia.SDOp = unaryOp{}
	_ gorgonia.SDOp = scaledOp{}
	_ gorgonia.SDOp = choleskyOp{}
	_ gorgonia.SDOp = choleskyGradOp{}
	_ gorgonia.SDOp = logDetTriOp{}
	_ gorgonia.SDOp = logDetTriGradOp{}
	_ gorgonia.SDOp = solveOp{}
	_ gorgonia.SDOp = triOuterOp{}
	_ gorgonia.SDOp = logSumExpOp{}
	_ gorgonia.SDOp = logSumExpGradOp{}
	_ gorgonia.SDOp = rqSplineOp{}
	_ gorgonia.SDOp = rqSplineGradOp{}
	_ gorgonia.SDOp = sliceOp{}
	_ gorgonia.SDOp = glmOp{}
	_ gorgonia.SDOp = glmGradOp{}
	_ gorgonia.SDOp = odeOp{}
	_ gorgonia.SDOp = odeGradOp{}
	_ gorgonia.SDOp = hmmOp{}
	_ gorgonia.SDOp = hmmGradOp{}

	_ ad.Lowerer = choleskyOp{}
	_ ad.Cloner  = (*choleskyGradKernel)(nil)
	_ ad.Cloner  = (*glmKernel)(nil)
	_ ad.Cloner  = (*odeKernel)(nil)
	_ ad.Cloner  = (*hmmKernel)(nil)

	_ ad.FullWriter = (*maskedKernel)(nil)
	_ ad.FullWriter = rowsKernel{}
	_ ad.FullWriter = rowsGradKernel{}
	_ ad.FullWriter = sliceKernel{}
	_ ad.FullWriter = embedKernel{}
	_ ad.FullWriter = permuteKernel{}
	_ ad.FullWriter = unaryKernel{}
	_ ad.FullWriter = (*odeKernel)(nil)
	_ ad.FullWriter = odeGradKernel{}
	_ ad.FullWriter = (*hmmKernel)(nil)
	_ ad.FullWriter = packedGradKernel{}
)

// typeVar is the element type shared by all inputs and the output.
var typeVar = hm.TypeVariable('a')

// tensorType is the gorgonia type of a float tensor with dims dimensions;
// dims 0 is a scalar.
func tensorType(dims int) hm.Type {
	if dims == 0 {
		return typeVar
	}
	return gorgonia.TensorType{Dims: dims, Of: typeVar}
}

// checkNodes rejects nil and non-float64 nodes before an op is applied, so
// that users get a clear error; gorgonia.ApplyOp checks the graphs.
func checkNodes(name string, ns ...*gorgonia.Node) error {
	for i, n := range ns {
		if n == nil {
			return fmt.Errorf("ops: %s: argument %d is nil", name, i)
		}
		if n.Dtype() != tensor.Float64 {
			return fmt.Errorf("ops: %s: argument %d has dtype %v, want float64", name, i, n.Dtype())
		}
	}
	return nil
}

// shapesOf converts gorgonia's DimSizers to shapes.
func shapesOf(ds []gorgonia.DimSizer) ([]tensor.Shape, error) {
	s := make([]tensor.Shape, len(ds))
	for i, d := range ds {
		sh, ok := d.(tensor.Shape)
		if !ok {
			return nil, fmt.Errorf("ops: input %d has no tensor shape (%T)", i, d)
		}
		s[i] = sh
	}
	return s, nil
}

// enumName is names[v], or type(v) for a value without a name.
func enumName(names []string, typ string, v uint8) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

// shapesOfN is shapesOf for op, which takes n inputs.
func shapesOfN(op fmt.Stringer, ds []gorgonia.DimSizer, n int) ([]tensor.Shape, error) {
	s, err := shapesOf(ds)
	if err != nil {
		return nil, err
	}
	if len(s) != n {
		return nil, fmt.Errorf("ops: %v: %d inputs", op, len(s))
	}
	return s, nil
}

// isScalarShape reports whether s describes a single number.
func isScalarShape(s tensor.Shape) bool { return len(s) == 0 }

// flat returns the float64 data of a gorgonia value, materialising views.
func flat(v gorgonia.Value) ([]float64, tensor.Shape, error) {
	switch x := v.(type) {
	case *gorgonia.F64:
		return []float64{float64(*x)}, tensor.ScalarShape(), nil
	case tensor.Tensor:
		if x.Dtype() != tensor.Float64 {
			return nil, nil, fmt.Errorf("ops: value has dtype %v, want float64", x.Dtype())
		}
		if d, ok := x.(*tensor.Dense); ok && d.IsMaterializable() {
			x = d.Materialize()
		}
		data, ok := x.Data().([]float64)
		if !ok {
			if f, ok2 := x.Data().(float64); ok2 {
				return []float64{f}, x.Shape().Clone(), nil
			}
			return nil, nil, fmt.Errorf("ops: unsupported value data %T", x.Data())
		}
		return data, x.Shape().Clone(), nil
	case nil:
		return nil, nil, errors.New("ops: nil input value")
	default:
		return nil, nil, fmt.Errorf("ops: unsupported value type %T", v)
	}
}

// doWithKernel implements gorgonia's Do by lowering the op for the actual
// input shapes and running its kernel, so the TapeMachine and ad.Compile
// compute the same thing.
func doWithKernel(op lowerer, vals []gorgonia.Value) (gorgonia.Value, error) {
	if len(vals) != op.Arity() {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want %d", op, len(vals), op.Arity())
	}
	in := make([][]float64, len(vals))
	shapes := make([]tensor.Shape, len(vals))
	for i, v := range vals {
		d, s, err := flat(v)
		if err != nil {
			return nil, fmt.Errorf("ops: %v: %w", op, err)
		}
		in[i], shapes[i] = d, s
	}
	k, outShape, out, err := lowerFor(op, shapes)
	if err != nil {
		return nil, err
	}
	if err := k.Eval(out, in); err != nil {
		return nil, fmt.Errorf("ops: %v: %w", op, err)
	}
	if isScalarShape(outShape) {
		return gorgonia.NewF64(out[0]), nil
	}
	return tensor.New(tensor.WithShape(outShape.Clone()...), tensor.WithBacking(out)), nil
}

// lowerFor infers op's output shape for the input shapes, lowers op for
// them and allocates the output buffer.
func lowerFor(op lowerer, shapes []tensor.Shape) (ad.Kernel, tensor.Shape, []float64, error) {
	ds := make([]gorgonia.DimSizer, len(shapes))
	for i, s := range shapes {
		ds[i] = s
	}
	outShape, err := op.InferShape(ds...)
	if err != nil {
		return nil, nil, nil, err
	}
	k, err := op.Lower(shapes)
	if err != nil {
		return nil, nil, nil, err
	}
	return k, outShape, make([]float64, outShape.TotalSize()), nil
}

// hashOf implements Hashcode from WriteHash.
func hashOf(op gorgonia.Op) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// writeHash writes the op's String, which encodes all its parameters.
func writeHash(h hash.Hash, op fmt.Stringer) { fmt.Fprint(h, op.String()) }

// errBufferSize is returned by a kernel whose buffers do not match the
// shapes it was lowered for: a bug in the caller, reported rather than
// panicking.
var errBufferSize = errors.New("ops: kernel buffer has the wrong length")

// matrixSide returns n if s is an n×n matrix.
func matrixSide(name string, s tensor.Shape) (int, error) {
	if len(s) != 2 || s[0] != s[1] || s[0] < 1 {
		return 0, fmt.Errorf("ops: %s: want a non-empty square matrix, got shape %v", name, s)
	}
	return s[0], nil
}

// packedGradKernel reads the n gradient entries at off of a fused op's
// packed output (log-likelihood first, then its gradient), scaled by the
// upstream gradient of the log-likelihood; the GLM and HMM ops share it.
// Differentiating through the gradient entries themselves is refused
// with err.
type packedGradKernel struct {
	off, n, packed int
	err            error
}

// WritesFullOutput implements ad.FullWriter: Eval writes every element of out.
func (k packedGradKernel) WritesFullOutput() bool { return true }

func (k packedGradKernel) Eval(out []float64, in [][]float64) error {
	if len(in) != 2 || len(in[0]) != k.packed || len(in[1]) != k.packed || len(out) != k.n {
		return errBufferSize
	}
	g := in[1]
	for _, v := range g[1:] {
		if v != 0 {
			return k.err
		}
	}
	for j, v := range in[0][k.off : k.off+k.n] {
		out[j] = g[0] * v
	}
	return nil
}
