package trj_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/draws"
)

// runToDir runs space with smallSettings(1) and chains of the given steps,
// writing into a new folder: it returns the result, the settings and the
// folder.
func runToDir(t *testing.T, space *ppl.Space, steps int) (*trj.Result, *trj.Settings, string) {
	t.Helper()
	s := smallSettings(1)
	s.Chains.Steps = steps
	s.OutputDir = t.TempDir()
	res, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	return res, s, s.OutputDir
}

// TestOutputDir: the draws stream to one CmdStan CSV per chain with a
// model__ column, beside the JSON summary and the figure; a cancelled run's
// files are valid and marked interrupted.
func TestOutputDir(t *testing.T) {
	skipInRacePass(t, "files checked after the run; the chains' concurrent writers are TestRunInterruptedKeepsEveryStep's")
	space := mustSubsetSpace(t, 40)
	res, _, dir := runToDir(t, space, 500)
	for _, f := range []string{"result.json", "running.png", "draws_1.csv", "draws_4.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	d, _, err := draws.ReadFiles(filepath.Join(dir, "draws_1.csv"), filepath.Join(dir, "draws_2.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Len(0) != 500 || !d.Layout().Transdimensional {
		t.Fatalf("draws_1.csv: %d rows, transdimensional %v", d.Len(0), d.Layout().Transdimensional)
	}
	for i := range 500 {
		if got, want := d.ModelIndex(0, i), res.Chains.Chains[0].Models[i]; got != want {
			t.Fatalf("row %d: model %d in the file, %d in the result", i, got, want)
		}
	}

	// Cancelled during the chains.
	dir = t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := smallSettings(1)
	s.Chains.Steps, s.Chains.Warmup = 1_000_000, 100
	s.OutputDir = dir
	s.Progress = func(p pipeline.Progress) {
		if p.Stage == "chains" && p.Chain == 0 && p.Done >= 1000 {
			cancel()
		}
	}
	if _, err := trj.Run(ctx, space, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	d, set, err := draws.ReadFiles(filepath.Join(dir, "draws_1.csv"))
	if err != nil {
		t.Fatal(err)
	}
	interrupted := false
	for _, kv := range set {
		interrupted = interrupted || kv.Key == draws.Interrupted
	}
	if d.Len(0) == 0 || !interrupted {
		t.Errorf("cancelled run: %d rows, interrupted marker %v", d.Len(0), interrupted)
	}
	if _, err := os.Stat(filepath.Join(dir, "result.json")); err != nil {
		t.Error(err)
	}
}
