package kernels

// Progress reports how far a run has come. Every progress callback of the
// package (SampleSettings, RJSampleSettings, SMCSettings) takes one, and
// trj.Settings and flows.TrainOptions report in the same shape: a value
// with Done units of Total.
type Progress struct {
	// Chain is the chain the report is about (Sample, SampleRJ; always 0
	// for RunSMC).
	Chain int
	// Done units of Total are finished: iterations with warm-up counted
	// first (Sample), steps with warm-up first (SampleRJ), or temperature
	// steps (RunSMC, whose Total is not known in advance and is 0).
	Done, Total int
	// Warmup reports whether the unit just finished was a warm-up one.
	Warmup bool
	// Beta is RunSMC's inverse temperature after the step (0 elsewhere).
	Beta float64
}
