//go:build race

package trj_test

// raceDetector reports whether the tests were built with -race.
const raceDetector = true
