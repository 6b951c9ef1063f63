package sas

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"

	"github.com/trjgo/trj/internal/checks"
)

// TestModelMatchesComponent checks the graph model of each component (and
// of a 3-dimensional one with a full L) against the hand-written density
// and gradient at exact draws and at points far in the tails, and the
// graph gradient against central finite differences of the graph density.
func TestModelMatchesComponent(t *testing.T) {
	c3, err := NewComponent([]float64{0.3, -1, 2}, []float64{0.7, 1.2, 2},
		[]float64{1.5, 0, 0, -0.4, 0.8, 0, 0.2, 0.9, -1.1})
	if err != nil {
		t.Fatal(err)
	}
	comps := []*Component{Paper().Component(0), Paper().Component(1), c3}
	rng := rand.New(rand.NewPCG(5, 6))
	for k, c := range comps {
		m, err := NewModel(c)
		if err != nil {
			t.Fatal(err)
		}
		if m.Dim() != c.Dim() {
			t.Fatalf("component %d: model dimension %d, want %d", k, m.Dim(), c.Dim())
		}
		n := c.Dim()
		x, g, gh := make([]float64, n), make([]float64, n), make([]float64, n)
		for rep := range 25 {
			if err := c.Sample(rng, x); err != nil {
				t.Fatal(err)
			}
			if rep%5 == 4 {
				for i := range x {
					x[i] = 40 * rng.NormFloat64()
				}
			}
			want, got := checks.Grad(t, c.LogDensityGrad, x, gh), checks.Grad(t, m.LogDensityGrad, x, g)
			if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("component %d at %v: graph log-density %v, hand %v", k, x, got, want)
			}
			if v, err := m.LogDensity(x); err != nil || v != got {
				t.Errorf("component %d: LogDensity %v (%v), LogDensityGrad %v", k, v, err, got)
			}
			fdg := fd.Gradient(nil, func(y []float64) float64 {
				v, _ := m.LogDensity(y)
				return v
			}, x, &fd.Settings{Formula: fd.Central})
			for i := range g {
				if math.Abs(g[i]-gh[i]) > 1e-8*(1+math.Abs(gh[i])) {
					t.Errorf("component %d at %v: graph grad[%d] %v, hand %v", k, x, i, g[i], gh[i])
				}
				if math.Abs(g[i]-fdg[i]) > 1e-5*(1+math.Abs(fdg[i])) {
					t.Errorf("component %d at %v: graph grad[%d] %v, finite differences %v", k, x, i, g[i], fdg[i])
				}
			}
		}
	}
	if _, err := NewModel(nil); err == nil {
		t.Error("NewModel(nil): no error")
	}
}

func TestNewSpace(t *testing.T) {
	tg := Paper()
	s, err := tg.NewSpace()
	if err != nil {
		t.Fatal(err)
	}
	if s.NumModels() != 2 || s.ModelDim(0) != 1 || s.ModelDim(1) != 2 || s.ModelLabel(0) != "1" || s.ModelLabel(1) != "2" {
		t.Fatalf("space: %d models, dims %d %d, labels %q %q", s.NumModels(), s.ModelDim(0), s.ModelDim(1), s.ModelLabel(0), s.ModelLabel(1))
	}
	x := []float64{0.3, -0.7}
	for k := range 2 {
		want, _ := tg.LogDensity(k, x[:tg.ModelDim(k)])
		got, err := s.LogDensity(k, x[:tg.ModelDim(k)])
		if err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("model %d: space log-density %v (%v), target %v", k, got, err, want)
		}
	}
}
