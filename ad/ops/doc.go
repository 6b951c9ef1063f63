// Package ops provides differentiable gorgonia operations that gorgonia
// v0.9.18 lacks or gets wrong, for writing log-densities: Cholesky
// factorisation, log-determinant of a symmetric positive-definite matrix,
// triangular solves, lgamma and digamma, asinh, sinh, atanh, a numerically
// stable log-sum-exp, softplus, log-sigmoid, the rational-quadratic
// spline, and the fused GLM log-likelihoods of regressions
// (BernoulliLogitGLM, PoissonLogGLM, NormalIDGLM), which compute Xβ and Xᵀr
// in one pass over the design matrix and can split their rows over several
// goroutines (ad.Program.SetWorkers) with results that do not depend on how
// many.
// ODESolve returns the solution of a system of ordinary differential
// equations at given times, by Dormand and Prince's adaptive 5(4) pair,
// differentiable in the initial state and the parameters by forward
// sensitivities; the right-hand side is itself a small graph (NewODE), so
// its Jacobians come from ad. Stiff problems are detected and reported
// (ErrODEStiff), and every solve is bounded by a number of steps.
// Slice and Concat are gorgonia's Slice and Concat with node hashes that
// keep slice bounds in full: gorgonia v0.9.18 merges slices of one node 256
// elements apart (see package ad).
// HMMMarginal is a hidden Markov model's log-likelihood with the states
// summed out (Stan's hmm_marginal on the log scale), by the forward
// algorithm, with the forward–backward gradient from the same kernel.
// For normalizing flows it adds the layers a masked autoregressive flow is
// made of: MaskedLinear (a fully connected layer with a block-triangular
// mask, whose products skip the masked weights), PermuteColumns, and
// RQSplineRows (the spline over a batch, one parameter row per element,
// keeping the knots of the forward pass for the gradient).
//
// Every constructor (Cholesky, LogDetSPD, SolveTriangular, Lgamma, ...) adds
// nodes to the graph of its arguments and returns the result. Each op
// implements gorgonia.SDOp, so gorgonia.Grad differentiates through it, and
// ad.Lowerer, so ad.Compile runs it as a native, allocation-free kernel. The
// op's Do, used by gorgonia's TapeMachine, runs the very same kernel, so the
// two paths agree to the last bit.
//
// Gradients are built from further ops of this package (the Cholesky
// backward pass, the transposed solve, ...), not from long chains of gorgonia
// primitives, so a compiled gradient costs a handful of kernel calls.
// Elementwise ops are differentiable twice (Lgamma, Asinh, Atanh, Softplus,
// LogSigmoid, LogBesselI0; Sinh indefinitely; Digamma once).
//
// Matrix ops treat their input as symmetric by using its symmetric part
// (A+Aᵀ)/2. This makes the function, and so its gradient, well defined for
// every entry of A, which is what finite-difference checks and graphs that
// build A from products such as BBᵀ need. gorgonia merges nodes with the same
// op and inputs, so LogDetSPD(a) and Cholesky(a) in one graph share a single
// factorisation. Only float64 is supported.
//
// Inputs outside an op's domain (a matrix that is not positive definite, a
// singular triangular matrix, atanh of |x| ≥ 1, lgamma at a pole) make Do and
// Kernel.Eval return an error (ErrNotPositiveDefinite, ErrSingular,
// ErrDomain), never a NaN; malformed shapes are rejected when the graph is
// built.
package ops
