package runs

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/trjgo/trj/internal/seed"
)

// SubSeed derives the seed of one stage's part i from the run's seed s.
func SubSeed(s uint64, stage string, i int) uint64 { return seed.Derive(s, stage, i) }

// Stream is the random stream of one stage's part i of the run with seed
// s: every chain and every part of a stage owns one.
func Stream(s uint64, stage string, i int) *rand.Rand { return seed.Stream(s, stage, i) }

// OrDefault sets *v to def when it is zero (unset): the settings rule of
// every settings struct of trj, whose zero value means the default.
func OrDefault[T int | float64](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

// CheckDir makes dir and checks that a file can be written in it, before
// any work is done.
func CheckDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	f, err := os.CreateTemp(dir, ".trj-check-*")
	if err != nil {
		return fmt.Errorf("output folder %s is not writable: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(filepath.Clean(name))
}
