//go:build !race

package selection

// selectRace reports whether the internal tests were built with -race.
const selectRace = false
