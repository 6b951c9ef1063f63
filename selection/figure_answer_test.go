package selection

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/trjgo/trj/models/glmselect"
)

// TestFiguresLargeP draws the figures of a run over 60 terms: the PIP
// figure shows the 40 largest (its height bounded), the running figure
// one colour per chain. TRJ_FIGURES=dir keeps the files for a look.
func TestFiguresLargeP(t *testing.T) {
	X, y := selectData(80, 60, 3)
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sp, &Settings{Seed: 1, Steps: 400, Warmup: 100})
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("TRJ_FIGURES")
	if dir == "" {
		dir = t.TempDir()
	}
	small, err := Run(context.Background(), smallSpace(t, 3), &Settings{Seed: 1, Steps: 300, Warmup: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		draw func(string) error
	}{
		{"pips60.png", func(p string) error { return res.WriteFigure(p) }},
		{"running60.png", func(p string) error { return res.WriteRunningFigure(p) }},
		{"pips4.png", func(p string) error { return small.WriteFigure(p) }},
	} {
		p := filepath.Join(dir, f.name)
		if err := f.draw(p); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if st, err := os.Stat(p); err != nil || st.Size() < 1000 || st.Size() > 2<<20 {
			t.Errorf("%s: %v bytes (%v)", f.name, st.Size(), err)
		}
	}
}
