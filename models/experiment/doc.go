// Package experiment holds what the paper's experiments share: the Result
// that `trj run -json` writes, replicate chains run in parallel with their
// own seeded random streams, running estimates of model probabilities,
// standard errors across replicates, repeated Bartolucci bridge estimates,
// stage timings and a progress reporter.
//
// Every random stream comes from Stream(seed, stage, index), so results
// depend only on the seed and the sizes, never on scheduling: replicate i of
// a stage always draws the same numbers whichever goroutine runs it and
// however many run at once.
//
// The JSON layout of a Result is
//
//	{"experiment": NAME,
//	 "proposals": {PROPOSAL: {"model_probabilities": {LABEL: p},
//	                          "stderr": {LABEL: se},
//	                          "acceptance_rate": a,
//	                          "seconds": {STAGE: s}, ...}}, ...}
//
// with LABEL the model label as printed ("1", "2"; "1,0,1,1" for variable
// selection) and PROPOSAL one of exact, affine, rqma, crqma, lopes-west,
// indep-aux. Further fields (settings, truth, per-chain summaries, bridge
// replicates) are added alongside. Non-finite numbers are written as the strings "NaN", "+Inf" and "-Inf"
// (pipeline.Float).
package experiment
