package posteriordb

import "testing"

// skipInRacePass skips a test of CI's race pass (-race -short) that builds
// and evaluates every gallery model one after another: single-threaded
// work the detector has nothing to check in, which took most of the
// pass's five minutes here (garch11's and hmm_example's long scans under
// the detector). The pass without -race runs it.
func skipInRacePass(t *testing.T) {
	t.Helper()
	if raceDetector && testing.Short() {
		t.Skip("skipped with -race -short (single-threaded; run without -race)")
	}
}
