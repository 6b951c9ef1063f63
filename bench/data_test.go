package bench

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// sharedDataDir is the project's read-only data folder, seen from this
// package's directory (tests run with the package directory as cwd).
var sharedDataDir = filepath.Join("..", "..", "shared", "data")

// sharedDataFile is the path of a file in the shared data folder.
func sharedDataFile(name ...string) string {
	return filepath.Join(append([]string{sharedDataDir}, name...)...)
}

// skipWithoutSharedData skips tb when the shared data folder is absent,
// naming what it needed. A folder that exists but lacks the file is not a
// reason to skip: the case then fails with the loader's error.
func skipWithoutSharedData(tb testing.TB, needs string) {
	tb.Helper()
	if _, err := os.Stat(sharedDataDir); errors.Is(err, os.ErrNotExist) {
		tb.Skipf("shared data folder %s not found: this case needs %s", sharedDataDir, needs)
	}
}
