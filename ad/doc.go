// Package ad compiles gorgonia log-density graphs into fast, allocation-free
// evaluators of the value and its gradient.
//
// gorgonia's TapeMachine is general but costs tens of microseconds even for a
// tiny graph; samplers call a log-density millions of times. Compile walks the
// graph and its symbolic gradient (gorgonia.Grad) once, lowers every node to a
// pre-allocated Go kernel on []float64, and returns a Program whose
// LogDensityGrad runs close to the speed of hand-written Go.
//
// # Lowering
//
// gorgonia's built-in ops lower natively: elementwise unary and binary ops
// (including scalar–tensor forms and comparisons), matrix products through
// gonum BLAS, sums and maxima along axes, ByIndices and its gradient (for
// group indices in hierarchical models), and the data-movement ops
// (reshape, transpose, slice, concat, repeat and the slice-increment used by
// gradients of slices), which is also what gorgonia's Broadcast* helpers and
// Mean are made of. Data movement is compiled by running the op's own Do
// once on position-coded inputs, so it follows gorgonia's semantics exactly;
// reshapes and contiguous slices become views and cost nothing. The
// gradients of slices are not materialised one by one: when gorgonia.Grad
// sums the gradients of many slices of one tensor (x[0], x[1], … in an
// unrolled recursion), the whole sum is one instruction that scatters each
// slice's gradient into its positions of a single buffer, so taking T
// elements of a length-T vector costs O(T) per gradient, not O(T²).
// Instructions whose inputs are all constants, such as the seeds of the
// gradient, are evaluated once at compile time. A matrix–vector product by
// a constant or data selection matrix (0/1, at most one 1 per row: what
// ppl's Diag, StrictlyLower and DiagMatrix build) runs as a copy until Bind
// gives that matrix other values, and transposes around matrix products
// fold into the products' transpose flags (see transpose.go); both give
// the same values as the products they replace.
//
// After lowering, a matrix product added to another instruction's result
// accumulates into the sum's buffer instead (see gemmacc.go), and runs of
// consecutive elementwise instructions (unary and binary ops, sums of all
// elements, broadcasts and copies) are fused into single instructions: one
// dispatch for the run, each op's loop (by its code and the shapes of its
// operands) chosen at compile time, operands resolved at compile time (a
// broadcast scalar or a constant with all elements equal is read as a
// scalar), a sum accumulated in the loop of the square or product it sums,
// a product with a scalar merged into the product that feeds it, and
// softplus and sigmoid of one vector computed from one exp. Fused programs
// compute the same values as unfused ones up to the order of additions in
// fused sums (see fuse.go).
//
// Custom ops lower by implementing Lowerer. Any other op still works through
// its gorgonia Do method, slowly and with allocation; Program.Fallbacks lists
// such ops so that users can see what is slow.
//
// CompileOutputs compiles a forward-only program (no scalar output, no
// gradient) whose Outputs evaluate nodes such as a flow's map and its
// log-determinant. Triangular solves lower to TriangularSolve, the kernel
// that ad/ops.SolveTriangular returns.
//
// # Data and concurrency
//
// Input nodes passed as wrt are the parameters; every other input node must
// hold a value (data), copied in at compile time and replaceable with
// Program.Bind. Data is float64, except that integer index vectors (as
// ByIndices takes) are accepted and held as float64; indices are
// range-checked on every evaluation.
//
// Concurrency has one rule for every Program, whatever it compiled to: it
// keeps scratch buffers and must not be used by two goroutines at once.
// Clone gives each goroutine its own, sharing the compiled instructions; a
// call overlapping another on the same Program returns ErrConcurrentUse.
//
// # Known gorgonia issues
//
// The Program computes exactly the gradient graph that gorgonia.Grad builds.
// In gorgonia v0.9.18 that graph is wrong for InverseSqrt, Log2 and
// OuterProd (whose two gradients are swapped; Compile reports the resulting
// shape mismatch as an error when the vectors differ in length), and Grad
// fails outright on some graphs mixing OuterProd with matrix products. Write
// 1/√x as Pow(x, −0.5), log₂ x as Log(x)/ln 2, and outer products as a matrix
// product of a column and a row. Separately, gorgonia's TapeMachine computes
// the gradient of ByIndices along axes other than 0 wrongly (tensor's
// ByIndicesB); the native kernel here is checked against finite
// differences. The tests pin all of these down so that an upstream fix is
// noticed.
//
// gorgonia v0.9.18 also hashes a slice's bounds as single bytes, and merges
// nodes with equal hashes: gorgonia.Slice(x, S(0)) and gorgonia.Slice(x,
// S(256)) are one node, and so are the gradients gorgonia.Grad slices out
// of a Concat for pieces 256 elements apart. The model is then silently
// wrong. Use ops.Slice and ops.Concat, which hash their bounds in full and
// compile to the same instructions (custom data-movement ops declare
// themselves through Mover). Compile refuses, with an error naming the
// cause, a gorgonia slice that another one 256·k elements away could have
// been merged into, and a gorgonia Concat whose gradient slices would
// merge (see slicehash.go).
package ad
