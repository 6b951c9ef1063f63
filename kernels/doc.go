// Package kernels holds trj's Markov kernels: random-walk Metropolis, NUTS,
// SMC for pilot runs, the transdimensional TRJ and CTRJ kernels, classic
// reversible-jump proposals, and the Bartolucci bridge estimator.
//
// Kernels follow an explicit-state design: a kernel value holds its
// parameters, Step takes a random stream and a state and returns the new
// state and an Info describing what happened. Nothing is global; each chain
// owns its random stream and its target.
//
// Kernels know models only through Target, a log-density with its
// gradient. An error from a Target, or a non-finite value, is a rejected
// proposal, never a panic.
//
// Within-model kernels:
//
//   - NUTS is the No-U-Turn sampler as in Stan: multinomial sampling along
//     the trajectory, the generalized no-U-turn criterion, divergence
//     detection, and a diagonal, dense or unit Metric. Its Step does not
//     allocate.
//   - RWM is random-walk Metropolis with proposal N(0, scale²·Σ).
//
// Adaptation is a separate layer that runs kernel steps during warm-up and
// tunes the kernel's exported parameters: NUTSAdaptation is Stan's
// windowed warm-up (DualAveraging of the step size, metric estimates over
// doubling slow windows); RWMAdaptation is Robbins–Monro on the scale
// toward acceptance 0.234 with optional covariance estimates.
//
// SelectionKernel is the transdimensional kernel of variable selection over
// the 2^P models of a SelectionTarget: add, drop or swap one term (MC3's
// neighbourhood, optionally with locally balanced informed choice), the
// parameters carried through each model's transport to the standard normal,
// then within-model independence and whitened random-walk steps.
//
// Sample runs several chains in parallel, one Target and one random stream
// per chain, with results that depend only on the seed. RunSMC is an
// adaptive-tempering SMC sampler for pilot runs that also estimates the
// evidence.
package kernels
