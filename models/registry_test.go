package models

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/trjgo/trj/models/datasets"
)

func TestRegistry(t *testing.T) {
	names := Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names not sorted: %v", names)
	}
	if len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("duplicate names: %v", names)
	}
	for _, want := range []string{"eight_schools_noncentered", "eight_schools_centered", "kilpisjarvi", "kidscore_interaction",
		"blr", "diamonds", "arK", "arma11", "garch11", "gp_pois_regr", "low_dim_gauss_mix", "hmm_example",
		"earnings-earn_height", "kidiq-kidscore_momhs", "mesquite-mesquite", "nes1980-nes", "nes2000-nes", "sblri-blr"} {
		e, ok := Lookup(want)
		if !ok {
			t.Errorf("Lookup(%q) failed", want)
			continue
		}
		if e.Name != want || e.New == nil || e.DataFile == "" || e.Description == "" {
			t.Errorf("incomplete entry %+v", e)
		}
	}
	if _, ok := Lookup("nope"); ok {
		t.Error(`Lookup("nope") succeeded`)
	}
}

// TestRegistryBuildsEveryModel builds each entry from its embedded data
// set and from a copy of it in a data folder (as $TRJ_DATA names one).
func TestRegistryBuildsEveryModel(t *testing.T) {
	if raceDetector && testing.Short() {
		// Builds every gallery model one after another: single-threaded
		// minutes under the detector, which has nothing to check in them.
		// The pass without -race runs it.
		t.Skip("skipped with -race -short (single-threaded; run without -race)")
	}
	dir := t.TempDir()
	for _, e := range All() {
		raw, err := datasets.ReadFile(e.DataFile)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		p := e.DataPath(dir)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"", p} {
			m, err := e.New(path)
			if err != nil {
				t.Errorf("%s (data %q): %v", e.Name, path, err)
				continue
			}
			if m.Dim() < 1 || len(m.ParamNames()) < m.Dim()-1 {
				t.Errorf("%s: dimension %d, %d names", e.Name, m.Dim(), len(m.ParamNames()))
			}
		}
	}
	if _, err := All()[0].New("/nonexistent/data.json"); err == nil {
		t.Error("missing data file: no error")
	}
}
