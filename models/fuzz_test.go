package models_test

import (
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
		b, err := datasets.ReadFile(e.DataFile)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(i))
	}
	f.Add([]byte(`{"J": 3, "y": [1, 2], "sigma": [1, 1, 1]}`), uint8(0))
	f.Add([]byte(`{"N": 1000000000000, "x": []}`), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
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
