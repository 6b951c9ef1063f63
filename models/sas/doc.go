// Package sas is the illustrative example of the transport reversible jump
// paper (§4.2): a two-model transdimensional target whose conditional
// densities are sinh-arcsinh (SAS) transformations of correlated Gaussians,
// so that the exact transport maps to the standard normal are known.
//
// For a lower-triangular L and element-wise parameters ε and δ > 0 define
//
//	S(x)   = sinh((asinh(x) + ε) / δ)
//	S⁻¹(θ) = sinh(δ·asinh(θ) − ε)
//
// If z ~ N(0, I) then θ = S(Lz) has density
//
//	p(θ) = φ_{LLᵀ}(S⁻¹(θ)) · |J_{S⁻¹}(θ)|
//
// and T(θ) = L⁻¹S⁻¹(θ) is an exact transport of p to N(0, I).
//
// The paper's target has model k=1 of dimension 1 with ε = −2, δ = 1, L = 1
// and prior/posterior probability 1/4, and model k=2 of dimension 2 with
// ε = (1.5, −2), δ = (1, 1.5), LLᵀ = [[1, .99], [.99, 1]] and probability
// 3/4:
//
//	π(k, θ_k) = p(k) · p_{ε_k, δ_k, L_k}(θ_k).
//
// Models are indexed from zero in Go: index 0 is the paper's k=1 and index 1
// its k=2; Label reports the paper's numbering.
//
// NewModel writes a component's density as a ppl model (a gorgonia graph,
// differentiated automatically) and Target.NewSpace the target as a
// ppl.Space, what trj.Run takes; the hand-written Component is the exact
// reference they are tested against.
//
// Component satisfies kernels.Target (value and gradient) for within-model
// samplers, Transport satisfies kernels.Transport, and Target satisfies
// kernels.TransdimensionalTarget; the interfaces are matched structurally.
//
// Target.Run runs the paper's experiment on this target (`trj run
// sas`) with one trj.Run per proposal type (exact, affine, rqma) on the
// space of NewSpace: exact pilot draws (trj.GivenPilots: training draws and
// independent evaluation sets), the exact transports as user transports or
// affine and RQMA flows fitted to the training draws, the Bartolucci bridge
// estimate of each evaluation set and pooled, TRJ chains alternating a jump
// with the fixed probabilities j = (1/4, 3/4) and a within-model random
// walk, and the proposal scatter of the paper's Figure 2;
// Result.WriteFigures draws the figures and Merge joins
// the parts of a run split over processes.
package sas
