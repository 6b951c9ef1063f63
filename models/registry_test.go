package models

import (
	"os"
	"slices"
	"testing"
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
		"blr", "diamonds", "arK", "arma11", "garch11", "gp_pois_regr", "low_dim_gauss_mix", "hmm_example"} {
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

// TestRegistryBuildsEveryModel builds each entry from its default data
// file in the shared data folder.
func TestRegistryBuildsEveryModel(t *testing.T) {
	const dir = "../../shared/data"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared data folder %s not found: %v", dir, err)
	}
	for _, e := range All() {
		m, err := e.New(e.DataPath(dir))
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if m.Dim() < 1 || len(m.ParamNames()) < m.Dim()-1 {
			t.Errorf("%s: dimension %d, %d names", e.Name, m.Dim(), len(m.ParamNames()))
		}
	}
	if _, err := All()[0].New("/nonexistent/data.json"); err == nil {
		t.Error("missing data file: no error")
	}
}
