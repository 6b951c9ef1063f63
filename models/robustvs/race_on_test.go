//go:build race

package robustvs

const raceDetector = true
