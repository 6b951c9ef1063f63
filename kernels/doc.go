// Package kernels holds trj's Markov kernels: random-walk Metropolis, NUTS,
// SMC for pilot runs, the transdimensional TRJ and CTRJ kernels, classic
// reversible-jump proposals, and the Bartolucci bridge estimator.
//
// Kernels follow an explicit-state design: a kernel value holds its
// parameters, Step takes a random stream and a state and returns the new
// state and an Info describing what happened. Nothing is global; each chain
// owns its random stream and its target.
package kernels
