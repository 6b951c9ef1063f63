//go:build race

package ad

// raceDetector reports whether the tests were built with -race.
const raceDetector = true
