// Package mc3 is the benchmarks' reference sampler for variable
// selection: MC³ (uniform add, drop and swap Metropolis–Hastings) on the
// closed-form posterior of Gaussian regression under Zellner's g-prior,
// written apart from trj's models/glmselect and selection so that its
// long runs check them (bench/finemap, bench/widesel).
package mc3
