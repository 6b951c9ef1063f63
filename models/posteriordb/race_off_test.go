//go:build !race

package posteriordb

const raceDetector = false
