//go:build race

package posteriordb

const raceDetector = true
