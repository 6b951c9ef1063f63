// Package runs holds the rules that trj.Run and selection.Run share and
// that users never call: the streams of a run's seed, defaults and bounds
// of settings, the output-folder rule, fingerprints, shard plans and
// merges, and what an interrupted run keeps. Each rule is stated here once
// and both workflows use it.
package runs
