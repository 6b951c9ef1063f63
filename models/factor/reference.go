package factor

// ReferencePi2 is π(2 factors | y) on DefaultData with equal prior model
// probabilities, computed without trj's pilots, transports or jumps, and
// ReferencePi2SE its standard error. It is the reference for the error of
// trj.Run on NewSpace(DefaultData()) (bench/README.md, "Factor analysis:
// trj.Run defaults"); the program bench/factorref recomputes it
// (go run ./bench/factorref: 244 CPU-s).
//
// Method: each model's evidence is estimated on the sign-free scale
// (every loading real, β_jj ~ N(0, 1) instead of N⁺(0, 1), log Λ_ii), on
// which the posterior is invariant under the sign flip of any column of B
// and whose integral equals NewModel's evidence (each of the 2^k orthants
// of the diagonal holds 2^−k of it). On the positive-diagonal scale the
// two sign modes of column 2 are disconnected (β_22 is near zero); on the
// sign-free scale they are one mode across β_22 = 0. NUTS chains on that
// scale (8 × 5000 draws per model), folded onto one sign copy, are fitted
// by a mixture of 16 multivariate t's (ν = 4); symmetrised over the 2^k
// sign flips, it is the proposal of importance sampling (10⁶ draws per
// model), so that every sign copy gets the posterior's own weight
// whatever copies the chains visited. Three estimates agree (seed 1):
//
//	                                       log Z (2)            log Z (3)            π(2)
//	importance, mixture fitted to NUTS     −903.2105 ± 0.0010   −905.3547 ± 0.0050   0.8951 ± 0.0005
//	importance, mixture refitted to it     −903.2120 ± 0.0011   −905.3486 ± 0.0076   0.8944 ± 0.0007
//	bridge (Meng–Wong), NUTS and refitted  −903.2120 ± 0.0011   −905.3517 ± 0.0034   0.8947 ± 0.0003
//
// ReferencePi2 is their mean; ReferencePi2SE is the largest of their
// standard errors rounded up, leaving room for the importance weights'
// right tail on the 3-factor model (effective sample size 0.6–4 % of the
// draws). With seed 2 the three estimates of π(2) were 0.8946 ± 0.0012,
// 0.8942 ± 0.0010 and 0.8952 ± 0.0003.
// Lopes and West's 0.88 (Truth2) is 15 of these SEs below it.
const (
	ReferencePi2   = 0.8948
	ReferencePi2SE = 0.001
)
