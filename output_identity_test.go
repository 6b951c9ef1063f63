package trj_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/pipeline"
)

// TestOutputDirOfAnotherRun: a run refuses, before any work, a folder
// holding another run's chain files, naming them; a shard of the same run
// writes beside them; each file carries the run's fingerprint.
func TestOutputDirOfAnotherRun(t *testing.T) {
	skipInRacePass(t, "a whole run and its files, checked for the folder rule, which has no concurrency")
	space := mustSubsetSpace(t, 40)
	res, s, dir := runToDir(t, space, 200)
	h, err := runs.CSVSettings(filepath.Join(dir, "draws_2.csv"))
	if err != nil || h[runs.FingerprintKey] != res.Fingerprint {
		t.Errorf("draws_2.csv: fingerprint %q, the run's %q (%v)", h[runs.FingerprintKey], res.Fingerprint, err)
	}
	other := smallSettings(2)
	other.Chains.Steps, other.OutputDir = 200, dir
	var calls int
	other.Progress = func(pipeline.Progress) { calls++ }
	_, err = trj.Run(context.Background(), space, other)
	if err == nil || !strings.Contains(err.Error(), "another run") || !strings.Contains(err.Error(), "draws_4.csv") || calls > 0 {
		t.Errorf("a folder of another run: %v after %d progress calls", err, calls)
	}
	s.Chains.Shard = []int{3}
	if _, err := trj.Run(context.Background(), space, s); err != nil {
		t.Errorf("a shard of the same run: %v", err)
	}
}
