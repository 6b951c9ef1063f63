package kernels

// Transport carries one model's posterior to the reference distribution, the
// standard normal. Forward is θ → z.
//
// Implementations in package flows and the exact sinh-arcsinh transports in
// package models satisfy it. A Transport keeps scratch space, so each chain
// needs its own.
type Transport interface {
	// Dim is the dimension of θ and z.
	Dim() int
	// Forward sets z = T(θ) and returns log|det J_T(θ)|.
	Forward(theta, z []float64) (logDet float64, err error)
	// Inverse sets θ = T⁻¹(z) and returns log|det J_T⁻¹(z)| = −log|det J_T(θ)|.
	Inverse(z, theta []float64) (logDet float64, err error)
}

// ConditionalTransport is the conditional transport T̃(·|k) of CTRJ on the
// saturated space of dimension MaxDim: given model k it carries the saturated
// vector ξ = (θ_k, u) to the reference.
type ConditionalTransport interface {
	// MaxDim is the saturated dimension n_max.
	MaxDim() int
	// Forward sets z = T̃(ξ|k) and returns log|det J_T̃(ξ|k)|.
	Forward(k int, xi, z []float64) (logDet float64, err error)
	// Inverse sets ξ = T̃⁻¹(z|k) and returns log|det J_T̃⁻¹(z|k)|.
	Inverse(k int, z, xi []float64) (logDet float64, err error)
}
