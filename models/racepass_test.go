package models

import (
	"testing"
)

// SkippedInRacePass reports whether this is CI's race pass (-race
// -short), which skips building the gallery models from their data one
// after another (the fuzz target's seeds): single-threaded minutes under
// the detector, which has nothing to check in them. The pass without
// -race runs them. Exported for the fuzz test's package.
func SkippedInRacePass() bool {
	return raceDetector && testing.Short()
}
