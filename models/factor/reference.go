package factor

// ReferencePi2 is π(2 factors | y) on DefaultData with equal prior model
// probabilities, computed without trj's pilots, transports or jumps, and
// ReferencePi2SE its standard error. It is the reference for the error of
// trj.Run on NewSpace(DefaultData()) (bench/README.md, "Factor analysis:
// trj.Run defaults"); the program bench/factorref recomputes it.
//
// Method: each model's evidence is estimated on the sign-free scale
// (every loading real, β_jj ~ N(0, 1) instead of N⁺(0, 1), log Λ_ii), on
// which the posterior is invariant under the sign flip of any column of B
// and whose integral equals NewModel's evidence (each of the 2^k
// orthants of the diagonal holds 2^−k of it). Long NUTS chains on that
// scale, folded onto one sign copy, are fitted by a mixture of
// multivariate t's; symmetrised over the 2^k sign flips it is the
// proposal of importance sampling and of Meng and Wong's bridge with the
// NUTS draws. On the positive-diagonal scale the two sign modes of
// column 2 are disconnected (β_22 is near zero); on the sign-free scale
// they are one mode across β_22 = 0, and the symmetrised proposal gives
// every sign copy the posterior's own weight.
const (
	ReferencePi2   = 0.893
	ReferencePi2SE = 0.002
)
