//go:build race

package trj

// selectRace reports whether the internal tests were built with -race.
const selectRace = true
