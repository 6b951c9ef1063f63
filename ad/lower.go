package ad

import (
	"errors"

	"gorgonia.org/tensor"
)

// ErrNonFinite is returned (wrapped) by Program methods when the value or
// gradient of the log-density is NaN or infinite. Samplers treat it as a
// rejected proposal (log-density −∞) rather than a failure.
var ErrNonFinite = errors.New("ad: non-finite value or gradient")

// Lowerer is implemented by custom gorgonia ops that can run natively inside a
// compiled Program. Ops that do not implement it still work, through their
// gorgonia Do method, but slowly; Program.Fallbacks lists them.
type Lowerer interface {
	// Lower is called once at compile time with the shapes of the op's
	// inputs, in argument order. It returns a Kernel that computes the op's
	// output, or an error if the shapes are unsupported.
	Lower(in []tensor.Shape) (Kernel, error)
}

// Kernel evaluates one op on flat, row-major float64 buffers. in holds the
// op's inputs in argument order and out the pre-allocated output, sized to the
// op's output shape. Eval must not allocate and must not retain the slices:
// it runs on the sampler's hot path, once per log-density evaluation.
// A Kernel may keep its own scratch space; a Program gives each clone its own
// Kernel only if the Kernel implements Cloner, so stateful kernels should.
type Kernel interface {
	Eval(out []float64, in [][]float64) error
}

// Scratcher is optionally implemented by a Kernel that needs temporary
// memory only while it evaluates. A Program then calls EvalScratch instead
// of Eval, with a buffer it shares among all its kernels (they run one at a
// time), so that neither the kernels nor each clone of the Program hold
// scratch of their own: a network of many layers, cloned per worker, needs
// one buffer of the largest layer's size per clone.
type Scratcher interface {
	Kernel
	// ScratchLen is the length of the scratch EvalScratch needs.
	ScratchLen() int
	// EvalScratch is Eval with scratch of length at least ScratchLen,
	// whose contents are unspecified on entry and may be overwritten.
	EvalScratch(out []float64, in [][]float64, scratch []float64) error
}

// Cloner is optionally implemented by a Kernel that keeps mutable scratch
// state. Program.Clone calls CloneKernel so that concurrent clones never share
// that state; kernels without state need not implement it.
type Cloner interface {
	CloneKernel() Kernel
}

// FullWriter is optionally implemented by a Kernel whose Eval writes every
// element of out on every call, whatever out held before, and reads no
// element of out before writing it. The compiler may then let out share
// memory with buffers that are dead while the kernel runs (a smaller
// arena); the output of any other Kernel keeps memory of its own, since
// the Kernel contract lets Eval rely on what it left in out last time.
type FullWriter interface {
	Kernel
	// WritesFullOutput reports whether Eval writes all of out as above.
	WritesFullOutput() bool
}

// Symmetric is optionally implemented by a Kernel whose output is a square
// matrix that Eval leaves exactly symmetric on every call: element (i, j)
// has the bits of element (j, i). The compiler may then multiply by the
// matrix where a product reads its transpose (see mergeSymmetricProducts).
type Symmetric interface {
	Kernel
	// SymmetricOutput reports whether out is always symmetric as above.
	SymmetricOutput() bool
}
