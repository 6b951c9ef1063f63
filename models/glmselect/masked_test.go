package glmselect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/ppl"
)

// TestGLMMaskedMatchesPerModel checks that every family's masked views
// (the default) give the log-density and gradient of the model built on
// its own (Settings.PerModel), at random points of several models, and
// the gradient of the views against finite differences.
func TestGLMMaskedMatchesPerModel(t *testing.T) {
	n, p := 40, 9
	X, y, yb, yc := familyData(n, p, 5)
	gauss := func(s *Settings) (*ppl.SelectionSpace, error) { return Gaussian(X, y, s) }
	families := []struct {
		name  string
		prior GaussianPrior
		mk    func(*Settings) (*ppl.SelectionSpace, error)
	}{
		{"gaussian nig", NormalInverseGamma{G: 1.7}, gauss},
		{"gaussian g-prior", GPrior{G: 13}, gauss},
		{"gaussian hyper-g", HyperG{A: 3.5}, gauss},
		{"gaussian hyper-g/n", HyperGN{}, gauss},
		{"gaussian zellner-siow", ZellnerSiow{}, gauss},
		{"logistic", nil, func(s *Settings) (*ppl.SelectionSpace, error) { return Logistic(X, yb, s) }},
		{"poisson", nil, func(s *Settings) (*ppl.SelectionSpace, error) { return Poisson(X, yc, s) }},
	}
	rng := rand.New(rand.NewPCG(8, 9))
	for _, f := range families {
		masked, err := f.mk(&Settings{Prior: f.prior, PriorSD: 1.3})
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		single, err := f.mk(&Settings{Prior: f.prior, PriorSD: 1.3, PerModel: true})
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if masked.Always() != single.Always() || masked.Shared() != single.Shared() {
			t.Fatalf("%s: masked layout (%d always, %d shared), per model (%d, %d)", f.name, masked.Always(), masked.Shared(), single.Always(), single.Shared())
		}
		sets := [][]int{{}, {0}, {8}, {1, 4}, {0, 2, 3, 7}, {0, 1, 2, 3, 4, 5, 6, 7, 8}}
		for r := 0; r < 4; r++ {
			var idx []int
			for j := range p {
				if rng.IntN(2) == 1 {
					idx = append(idx, j)
				}
			}
			sets = append(sets, idx)
		}
		for _, idx := range sets {
			tm, _ := ppl.NewTerms(p, idx...)
			mm, err := masked.Model(tm)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := single.Model(tm)
			if err != nil {
				t.Fatal(err)
			}
			if mm.Dim() != ms.Dim() {
				t.Fatalf("%s %v: masked dimension %d, per model %d", f.name, tm, mm.Dim(), ms.Dim())
			}
			d := mm.Dim()
			gm := make([]float64, d)
			for k := 0; k < 3; k++ {
				u := make([]float64, d)
				for i := range u {
					u[i] = 0.7 * rng.NormFloat64()
				}
				lm := checks.SameDensity(t, fmt.Sprintf("%s %v: masked against per model", f.name, tm), mm.LogDensityGrad, ms.LogDensityGrad, u, gm, 1e-10)
				if l, _ := mm.LogDensity(u); l != lm {
					t.Errorf("%s %v: LogDensity %.17g, LogDensityGrad %.17g", f.name, tm, l, lm)
				}
				if k > 0 {
					continue
				}
				fun := func(x []float64) float64 { v, _ := mm.LogDensity(x); return v }
				want := fd.Gradient(nil, fun, u, &fd.Settings{Formula: fd.Central, Step: 1e-5})
				for i := range gm {
					if math.Abs(gm[i]-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
						t.Errorf("%s %v: masked ∂/∂u%d = %.8g, finite differences %.8g", f.name, tm, i, gm[i], want[i])
					}
				}
			}
		}
	}
}
