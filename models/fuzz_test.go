package models_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/trjgo/trj/models"
	"github.com/trjgo/trj/models/datasets"
)

// FuzzDataJSON gives a gallery model (chosen by which) arbitrary bytes as
// its JSON data file: the model must be built or refused with an error,
// never panic, and a model built must evaluate at the origin without
// panicking. The seeds are the models' own data files.
func FuzzDataJSON(f *testing.F) {
	all := models.All()
	for i, e := range all {
		if models.SkippedInRacePass() {
			continue // the pass without -race runs every seed
		}
		b, err := datasets.ReadFile(e.DataFile)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(i))
	}
	f.Add([]byte(`{"J": 3, "y": [1, 2], "sigma": [1, 1, 1]}`), uint8(0))
	f.Add([]byte(`{"N": 1000000000000, "x": []}`), uint8(1))
	// While fuzzing, keep to inputs the size of the small data sets: a
	// mutated copy of diamonds (2.4 MB) builds and compiles a model of
	// thousands of rows per execution, and one such input outlasted CI's
	// 10-second fuzz window. The seed corpus, diamonds included, still
	// runs whole under go test.
	fuzzing := flag.Lookup("test.fuzz") != nil && flag.Lookup("test.fuzz").Value.String() != ""
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		if fuzzing && len(data) > 64<<10 {
			return
		}
		e := all[int(which)%len(all)]
		path := filepath.Join(t.TempDir(), "data.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := e.New(path)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("%s: empty error", e.Name)
			}
			return
		}
		u := make([]float64, m.Dim())
		g := make([]float64, m.Dim())
		m.LogDensityGrad(u, g) // may fail, must not panic
	})
}
