package models

import (
	"testing"

	"github.com/trjgo/trj/models/datasets"
)

// largeForRace is the data size above which CI's race pass (-race -short)
// skips building a gallery model: building diamonds (2.4 MB, 5,000 rows)
// under the race detector took most of the package's four minutes there,
// and a build is single-threaded, so the detector has nothing to check in
// it. The pass without -race builds every model.
const largeForRace = 1 << 20

// SkippedInRacePass reports whether the race pass skips the model whose
// data file is dataFile; exported for the fuzz test's package.
func SkippedInRacePass(dataFile string) bool {
	if !raceDetector || !testing.Short() {
		return false
	}
	n, err := datasets.Size(dataFile)
	return err == nil && n > largeForRace
}
