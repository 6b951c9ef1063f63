// Package diag computes convergence diagnostics for Markov chain Monte Carlo
// draws of one scalar quantity: the rank-normalized split-R̂, bulk and tail
// effective sample sizes, Monte Carlo standard errors of the mean and of
// quantiles, and sample quantiles.
//
// The definitions follow Vehtari, Gelman, Simpson, Carpenter and Bürkner
// (2021), "Rank-normalization, folding, and localization: an improved R̂ for
// assessing convergence of MCMC", Bayesian Analysis 16(2), as implemented by
// Stan's posterior summaries and ArviZ, so that figures reported by trj can be
// compared with theirs.
//
// Every function takes the draws as x[chain][draw]: one slice per chain, all
// of the same length. Chains are split in half before R̂ and the effective
// sample sizes are computed, so that a trend within a chain shows up as
// disagreement between halves; for an odd number of draws the middle draw is
// left out of the split, as in the reference implementations.
//
// Undefined results are reported as errors rather than NaN: ErrConstant when
// the draws (or the quantile indicators of the tail ESS) do not vary,
// ErrTooFewDraws for chains too short to split, ErrNonFinite for NaN or ±Inf
// draws, and ErrShape for ragged or empty input.
package diag
