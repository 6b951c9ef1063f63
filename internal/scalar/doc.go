// Package scalar holds the small numerical helpers that several trj
// packages need alike: the finiteness checks and their sentinel error,
// which the public packages re-export as their ErrNonFinite so that one
// errors.Is test recognises a non-finite value from any of them, and the
// overflow-safe softplus and logistic sigmoid of the spline numerics.
package scalar
