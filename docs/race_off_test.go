//go:build !race

package docs_test

// raceDetector reports whether the tests were built with -race.
const raceDetector = false
