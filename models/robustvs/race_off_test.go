//go:build !race

package robustvs

const raceDetector = false
