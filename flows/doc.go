// Package flows provides normalizing flows that carry a model's posterior to
// a standard normal reference: the transports of transport reversible jump.
//
// Three kinds are provided, each trained from samples of the target:
//
//   - Affine: z = L⁻¹(θ − μ) from the weighted sample mean and the Cholesky
//     factor of the weighted sample covariance (FitAffine; no training).
//   - RQMA: T = h⁻¹ ∘ F ∘ h ∘ s, a fixed standardisation s, a sigmoid h and
//     a stack F of masked autoregressive rational-quadratic spline layers
//     with MADE conditioners, trained by maximum likelihood with Adam
//     (FitRQMA). PaperRQMAConfig and DefaultTrainOptions reproduce the
//     paper's settings.
//   - ConditionalRQMA: the conditional transport T̃(·|k) of CTRJ on the
//     saturated space, conditioned on each model's context vector, with a
//     conditional diagonal-normal base folded into the map so that every
//     model's reference is N(0, I) (FitConditionalRQMA).
//
// Laplace needs no samples: z = Lᵀ(θ − μ) from the mode μ of a log-density
// and its negative Hessian LLᵀ there (FitLaplace: Newton's method with
// the Hessian by finite differences of the gradient), with the Laplace
// approximation of the log evidence. It is the transport selection.Run gives
// each model of a variable selection on first visit.
//
// All of them implement the transport contracts of package kernels
// structurally: Forward(θ, z) sets z = T(θ) and returns log|det J_T(θ)|,
// Inverse(z, θ) sets θ = T⁻¹(z) and returns log|det J_T⁻¹(z)|. Forward is
// the direction used in training (one parallel pass); Inverse of the
// autoregressive flows is exact but sequential over coordinates.
//
// Single-point Forward and Inverse do not allocate, and their input and
// output may be the same slice. RQMA and ConditionalRQMA keep scratch
// space for that and need a Clone per goroutine. An Affine is safe for
// concurrent use as it is (its calls take turns). Training
// is deterministic given TrainOptions.Seed and
// TrainOptions.Workers. The fitting functions take a context: cancelling
// it stops training between Adam steps. A TrainCache (TrainOptions.Cache)
// lends compiled training losses between fits of one architecture, which
// saves their compile when many small flows are fitted.
//
// Every flow is a gorgonia graph built from layers: the standardisation,
// the sigmoid and logit, MADE conditioners of masked linear layers
// (ops.MaskedLinear), the permutations between layers and the batched
// rational-quadratic splines (ops.RQSplineRows); an Affine is one
// standardisation layer, a difference and a triangular solve
// (ops.SolveTriangular). Training compiles the
// minibatch negative log-likelihood with ad, whose gradient comes from
// gorgonia.Grad; no reverse mode is written by hand. An Affine's Forward and
// Inverse run compiled forward-only graphs too. An RQMA's single-point
// Forward and Inverse run compiled forward-only graphs without allocating;
// the inverse graph inverts each autoregressive layer with one op that
// computes one degree block of hidden units per coordinate, so it costs
// about one forward pass. ConditionalRQMA's maps are compiled the same way,
// with each model's standardisation and context bound as data. Fitted flows are saved and loaded in a
// versioned, checksummed binary format (Save, Load).
//
// A flow of one's own is written as a Builder: its forward map and
// log-determinant as a gorgonia graph on a batch, optionally its inverse
// (InverseBuilder; otherwise Inverse solves numerically). FitGraph trains
// it with the same trainer, GraphFlow evaluates it through compiled
// forward-only programs without allocating, Save and LoadGraph keep it, and
// it is a TRJ transport like the others. ExampleFitGraph writes an affine
// coupling flow this way.
package flows
