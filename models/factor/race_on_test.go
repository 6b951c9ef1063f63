//go:build race

package factor

const raceDetector = true
