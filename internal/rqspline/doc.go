// Package rqspline implements the scalar monotone rational-quadratic spline of
// Durkan et al. (2019), "Neural Spline Flows", on the interval [0, 1], together
// with its exact inverse and the vector-Jacobian products needed to train it
// and to wrap it as an autodiff op.
//
// A spline with K bins is parameterised by the unnormalised outputs of a
// conditioner network: K widths uw, K heights uh and K+1 knot derivatives ud.
// Widths and heights go through a softmax and are floored at MinBinWidth and
// MinBinHeight; derivatives go through a softplus and are floored at
// MinDerivative (the defaults of the nflows package). The knots at 0 and 1 are
// fixed, so the spline maps [0, 1] onto itself.
//
// Inputs outside [0, 1] are passed through unchanged (identity, log-derivative
// 0, no gradient with respect to the parameters). Because the spline maps 0 to
// 0 and 1 to 1 this keeps the map continuous and monotone on the whole real
// line, so rounding that pushes a sigmoid output a hair past the interval is
// harmless. NaN inputs give NaN outputs; callers check finiteness.
//
// The free functions (Forward, Inverse, ForwardVJP, InverseVJP) are
// allocation-free and safe for concurrent use: nothing is cached between
// calls, the softmax statistics are recomputed on the fly (K is small), and
// gradients are accumulated into caller-supplied slices. Knots caches one
// spline's normalised knots for a caller that evaluates and then
// differentiates the same spline, as a training step does.
package rqspline
