package ppl

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"
)

// selectionSpace is a block variable-selection space in the layout of the
// paper's §5.1: models (1, k1, k2, k2), β_i at saturated position i.
func selectionSpace(t *testing.T, opts ...SpaceOption) (*Space, [][]int) {
	t.Helper()
	x := [][]float64{{1, 0.5, -1, 2}, {1, -1, 0.3, 0.1}, {1, 2, 1, -0.5}}
	y := []float64{1.5, -0.2, 3}
	ind := [][]int{{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 1, 1}, {1, 1, 1, 1}}
	var models []Model
	var pos [][]int
	for _, k := range ind {
		var cols []int
		for i, on := range k {
			if on == 1 {
				cols = append(cols, i)
			}
		}
		b := NewBuilder()
		beta := b.Real("beta", len(cols))
		sub := make([]float64, 0, len(x)*len(cols))
		for _, row := range x {
			for _, c := range cols {
				sub = append(sub, row[c])
			}
		}
		xk := b.Data("X", sub, len(x), len(cols))
		b.Sample(Normal{Mu: 0, Sigma: 10}, beta)
		mu := b.Check(gorgonia.Mul(xk, beta))
		b.Sample(Normal{Mu: mu, Sigma: 1}, b.Data("y", y))
		m, err := b.Model()
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
		pos = append(pos, cols)
	}
	if !slices.EqualFunc(pos, IndicatorPositions(ind), slices.Equal) {
		t.Fatalf("IndicatorPositions %v, want %v", IndicatorPositions(ind), pos)
	}
	opts = append([]SpaceOption{WithIndicators(ind), WithPositions(pos)}, opts...)
	s, err := NewSpace(models, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, pos
}

func TestSpaceLookups(t *testing.T) {
	s, _ := selectionSpace(t, WithLogPrior([]float64{0, 0, math.Log(2), math.Log(2)}))
	if s.NumModels() != 4 || s.MaxDim() != 4 {
		t.Fatalf("NumModels %d, MaxDim %d", s.NumModels(), s.MaxDim())
	}
	k, err := s.Index("(1, 0, 1, 1)")
	if err != nil || k != 2 || s.ModelLabel(k) != "1,0,1,1" || s.ModelDim(k) != 3 {
		t.Fatalf("Index: %d, %v, label %q, dim %d", k, err, s.ModelLabel(k), s.ModelDim(k))
	}
	if _, err := s.Index("0,0,0,0"); err == nil {
		t.Error("unknown label found")
	}
	// Log prior weights 1:1:2:2 are normalised to 1/6, 1/6, 1/3, 1/3.
	for k, want := range []float64{1. / 6, 1. / 6, 1. / 3, 1. / 3} {
		lp, err := s.LogPrior(k)
		if err != nil || !near(math.Exp(lp), want, 1e-14) {
			t.Errorf("prior of model %d: %v, %v", k, math.Exp(lp), err)
		}
	}
	mask, _ := s.Active(2)
	if !slices.Equal(mask, []bool{true, false, true, true}) {
		t.Errorf("Active(2) %v", mask)
	}
	for _, bad := range []int{-1, 4} {
		if _, err := s.Model(bad); err == nil {
			t.Errorf("Model(%d) accepted", bad)
		}
		if _, err := s.LogDensity(bad, []float64{0}); err == nil {
			t.Errorf("LogDensity(%d) accepted", bad)
		}
		if _, err := s.SaturatedLogDensity(bad, make([]float64, 4)); err == nil {
			t.Errorf("SaturatedLogDensity(%d) accepted", bad)
		}
		if _, err := s.LogPrior(bad); err == nil {
			t.Errorf("LogPrior(%d) accepted", bad)
		}
		if s.ModelDim(bad) != 0 || s.ModelLabel(bad) != "" {
			t.Errorf("ModelDim/Label(%d) = %d, %q", bad, s.ModelDim(bad), s.ModelLabel(bad))
		}
	}
}

func TestSaturatedTarget(t *testing.T) {
	for _, sd := range []float64{1, 10} {
		s, pos := selectionSpace(t, WithAuxiliaryScale(sd))
		rng := rand.New(rand.NewPCG(5, 6))
		xi := make([]float64, s.MaxDim())
		for k := 0; k < s.NumModels(); k++ {
			for i := range xi {
				xi[i] = 2 * rng.NormFloat64()
			}
			// Reference: gather θ_k by position, add ν for the rest.
			theta := make([]float64, len(pos[k]))
			want := 0.0
			for i := range xi {
				if j := slices.Index(pos[k], i); j >= 0 {
					theta[j] = xi[i]
				} else {
					want += distuv.Normal{Sigma: sd}.LogProb(xi[i])
				}
			}
			lpk, err := s.LogDensity(k, theta)
			if err != nil {
				t.Fatal(err)
			}
			want += lpk
			got, err := s.SaturatedLogDensity(k, xi)
			if err != nil {
				t.Fatal(err)
			}
			if !near(got, want, 1e-13) {
				t.Errorf("sd %v model %d: saturated %.15g, want %.15g", sd, k, got, want)
			}
			g := make([]float64, s.MaxDim())
			if _, err := s.SaturatedLogDensityGrad(k, xi, g); err != nil {
				t.Fatal(err)
			}
			num := fd.Gradient(nil, func(x []float64) float64 {
				v, _ := s.SaturatedLogDensity(k, x)
				return v
			}, xi, &fd.Settings{Formula: fd.Central, Step: 1e-5})
			for i := range g {
				if !near(g[i], num[i], 1e-6) {
					t.Errorf("model %d: gradient[%d] %v, finite differences %v", k, i, g[i], num[i])
				}
			}
			// Split and Concat are inverse.
			th := make([]float64, s.ModelDim(k))
			u := make([]float64, s.MaxDim()-s.ModelDim(k))
			if err := s.Split(k, xi, th, u); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(th, theta) {
				t.Errorf("Split θ %v, want %v", th, theta)
			}
			back := make([]float64, s.MaxDim())
			if err := s.Concat(k, th, u, back); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back, xi) {
				t.Errorf("Concat %v, want %v", back, xi)
			}
		}
	}
}

func TestSpaceDefaultsAndErrors(t *testing.T) {
	mk := func(n int) Model {
		b := NewBuilder()
		b.Sample(Normal{Mu: 0, Sigma: 1}, b.Real("x", n))
		m, err := b.Model()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	s, err := NewSpace([]Model{mk(1), mk(3)})
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxDim() != 3 || s.ModelLabel(1) != "1" {
		t.Errorf("MaxDim %d, label %q", s.MaxDim(), s.ModelLabel(1))
	}
	if p, _ := s.Positions(0); !slices.Equal(p, []int{0}) {
		t.Errorf("default positions %v", p)
	}
	if lp, _ := s.LogPrior(1); !near(lp, math.Log(0.5), 1e-15) {
		t.Errorf("default prior %v", math.Exp(lp))
	}
	for name, opts := range map[string][]SpaceOption{
		"labels-count":    {WithLabels("a")},
		"labels-dup":      {WithLabels("a", "a")},
		"prior-count":     {WithLogPrior([]float64{0})},
		"prior-nan":       {WithLogPrior([]float64{0, math.NaN()})},
		"positions-count": {WithPositions([][]int{{0}})},
		"positions-order": {WithPositions([][]int{{0}, {2, 1, 3}})},
		"positions-len":   {WithPositions([][]int{{0}, {0, 1}})},
		"maxdim-small":    {WithSaturatedDim(2)},
		"aux-scale":       {WithAuxiliaryScale(0)},
		"nil-option":      {nil},
	} {
		if _, err := NewSpace([]Model{mk(1), mk(3)}, opts...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := NewSpace(nil); err == nil {
		t.Error("empty space accepted")
	}
	c := s.Clone()
	if v, err := c.SaturatedLogDensity(0, []float64{0.5, 1, 2}); err != nil || !near(v, math.Log(0.5)+distuv.UnitNormal.LogProb(0.5)+distuv.UnitNormal.LogProb(1)+distuv.UnitNormal.LogProb(2), 1e-14) {
		t.Errorf("clone saturated density %v, %v", v, err)
	}
}

func TestSaturatedDoesNotAllocate(t *testing.T) {
	s, _ := selectionSpace(t)
	xi := []float64{0.5, -1, 2, 0.3}
	g := make([]float64, 4)
	if a := testing.AllocsPerRun(100, func() { _, _ = s.SaturatedLogDensityGrad(2, xi, g) }); a != 0 {
		t.Errorf("SaturatedLogDensityGrad: %v allocations per call", a)
	}
}
