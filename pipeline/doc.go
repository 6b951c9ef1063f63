// Package pipeline is the layer the two workflows of trj stand on: trj.Run,
// which answers "which of my K models?", and selection.Run, which answers
// "which of my p terms?". It holds what their settings and results share,
// so that a user reads both the same way: Estimate, a posterior mean from
// chains with its Monte Carlo standard error, R̂ and effective sample size,
// computed by one rule (EstimateMean) and written to JSON by one rule
// (snake_case names, non-finite values as strings, never a failed write);
// and Progress, the one report of how far a run has come.
//
// The rules the two workflows share that users never call (seeds and
// streams, bounds on settings, output folders, fingerprints, shard plans
// and merges, interrupts) live in internal/runs.
package pipeline
