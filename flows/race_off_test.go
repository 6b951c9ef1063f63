//go:build !race

package flows

// raceDetector reports whether the tests were built with -race.
const raceDetector = false
