package pipeline

import "time"

// Progress reports how far a run has come: Done units of Total of one
// stage. trj.Run and selection.Run call their Settings.Progress with it.
type Progress struct {
	// Stage is the stage: "pilot", "transport", "bridge" or "chains" in
	// trj.Run, "chains" (and "first pass" for the flow families) in
	// selection.Run.
	Stage string
	// Model is the model concerned (−1 when the unit is a chain).
	Model int
	// Chain is the chain concerned (−1 when the unit is a model).
	Chain       int
	Done, Total int
	// Visited is the number of distinct models the chain has visited
	// (selection.Run; 0 in trj.Run).
	Visited int
	// Elapsed is the wall time since the run started (selection.Run; 0 in
	// trj.Run, whose Result.Timings time each stage).
	Elapsed time.Duration
}
