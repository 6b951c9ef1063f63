package ppl

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/kernels"
)

// sharedSpace is a selection over two candidate coefficients with a shared
// last parameter s: model k has log-density c_k + Σ log N(β_j; 0, 1) +
// log N(s; 2, 0.5²), dimension (ones of k) + 1.
func sharedSpace(t *testing.T, c []float64, opts ...SpaceOption) (*Space, [][]int) {
	t.Helper()
	ind := [][]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}}
	var models []Model
	for k, v := range ind {
		b := NewBuilder()
		if n := v[0] + v[1]; n > 0 {
			b.Sample(Normal{Mu: 0, Sigma: 1}, b.Real("beta", n))
		}
		b.Sample(Normal{Mu: 2, Sigma: 0.5}, b.Real("s"))
		b.AddLogDensity(gorgonia.NewConstant(c[k]))
		m, err := b.Model()
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	s, err := NewSpace(models, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, ind
}

func TestSharedLayout(t *testing.T) {
	c := []float64{0, 0.3, -0.2, 0.5}
	ind := [][]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}}
	s, _ := sharedSpace(t, c, WithIndicators(ind), WithPositions(IndicatorPositions(ind)), WithShared(1))
	if s.MaxDim() != 3 || s.NumShared() != 1 {
		t.Fatalf("MaxDim %d, NumShared %d; want 3 and 1", s.MaxDim(), s.NumShared())
	}
	wantPos := [][]int{{2}, {0, 2}, {1, 2}, {0, 1, 2}}
	masks := s.ActiveMasks()
	for k := range ind {
		pos, _ := s.Positions(k)
		if !slices.Equal(pos, wantPos[k]) {
			t.Errorf("model %d: positions %v, want %v", k, pos, wantPos[k])
		}
		if !masks[k][2] {
			t.Errorf("model %d: the shared position is not active: %v", k, masks[k])
		}
	}
	// Concat and Split are inverse, put the shared parameter last in ξ
	// and agree with the saturated density.
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range ind {
		n := s.ModelDim(k)
		theta, u := make([]float64, n), make([]float64, s.MaxDim()-n)
		for i := range theta {
			theta[i] = rng.NormFloat64()
		}
		for i := range u {
			u[i] = rng.NormFloat64()
		}
		xi := make([]float64, s.MaxDim())
		if err := s.Concat(k, theta, u, xi); err != nil {
			t.Fatal(err)
		}
		if xi[2] != theta[n-1] {
			t.Errorf("model %d: ξ = %v does not end with the shared θ %v", k, xi, theta[n-1])
		}
		theta2, u2 := make([]float64, n), make([]float64, len(u))
		if err := s.Split(k, xi, theta2, u2); err != nil || !slices.Equal(theta, theta2) || !slices.Equal(u, u2) {
			t.Errorf("model %d: Split gives %v, %v (%v); want %v, %v", k, theta2, u2, err, theta, u)
		}
		want, _ := s.LogDensity(k, theta)
		for _, x := range u {
			want += distuv.UnitNormal.LogProb(x)
		}
		if got, err := s.SaturatedLogDensity(k, xi); err != nil || !near(got, want, 1e-12) {
			t.Errorf("model %d: saturated log-density %v (%v), want %v", k, got, err, want)
		}
	}
	// Without indicators the own coordinates come first, the shared last.
	s2, _ := sharedSpace(t, c, WithShared(1), WithSaturatedDim(4))
	for k, want := range [][]int{{3}, {0, 3}, {0, 3}, {0, 1, 3}} {
		if pos, _ := s2.Positions(k); !slices.Equal(pos, want) {
			t.Errorf("default layout, model %d: positions %v, want %v", k, pos, want)
		}
	}
}

// TestSharedCTRJ checks CTRJ on the saturated layout: the models are
// standard normal in their own coordinates and share s ~ N(2, 0.5²), so
// with the identity transport and the shared parameter at one position,
// every jump k → k' is accepted with probability exactly
// min(1, exp(c_k' − c_k)). The same models laid out without WithShared (s
// at different positions) do not have that property.
func TestSharedCTRJ(t *testing.T) {
	c := []float64{0, 0.3, -0.2, 0.5}
	ind := [][]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}}
	jump := [][]float64{{0, 1. / 3, 1. / 3, 1. / 3}, {1. / 3, 0, 1. / 3, 1. / 3}, {1. / 3, 1. / 3, 0, 1. / 3}, {1. / 3, 1. / 3, 1. / 3, 0}}
	propose := func(s *Space, check func(k int, rec kernels.JumpRecord)) {
		ct, err := kernels.NewCTRJ(kernels.CTRJConfig{Target: s, Active: s.ActiveMasks(), Jump: jump})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for k := range ind {
			for range 50 {
				theta := make([]float64, s.ModelDim(k))
				for i := range theta {
					theta[i] = rng.NormFloat64()
				}
				theta[len(theta)-1] = 2 + 0.5*rng.NormFloat64()
				rec, err := ct.ProposeJump(rng, k, theta)
				if err != nil {
					t.Fatal(err)
				}
				check(k, rec)
			}
		}
	}
	s, _ := sharedSpace(t, c, WithIndicators(ind), WithPositions(IndicatorPositions(ind)), WithShared(1))
	propose(s, func(k int, rec kernels.JumpRecord) {
		if want := math.Min(1, math.Exp(c[rec.To]-c[k])); !near(rec.AcceptProb, want, 1e-10) {
			t.Errorf("jump %d → %d: acceptance %v, want %v", k, rec.To, rec.AcceptProb, want)
		}
	})
	bad, _ := sharedSpace(t, c)
	off := 0
	propose(bad, func(k int, rec kernels.JumpRecord) {
		if want := math.Min(1, math.Exp(c[rec.To]-c[k])); !near(rec.AcceptProb, want, 1e-10) {
			off++
		}
	})
	if off == 0 {
		t.Error("the test does not tell a misplaced shared parameter apart")
	}
}

func TestSharedAndIndicatorErrors(t *testing.T) {
	c := []float64{0, 0, 0, 0}
	ind := [][]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}}
	hack := [][]int{{0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}} // the shared parameter as an always-on indicator
	models := func() []Model {
		var ms []Model
		for k := range ind {
			m, _ := sharedSpace(t, c)
			mk, _ := m.Model(k)
			ms = append(ms, mk)
		}
		return ms
	}()
	// The indicator vectors with the shared parameter appended still work
	// without WithShared.
	if _, err := NewSpace(models, WithIndicators(hack), WithPositions(IndicatorPositions(hack))); err != nil {
		t.Errorf("always-on indicator layout: %v", err)
	}
	for name, c := range map[string]struct {
		opts []SpaceOption
		want string
	}{
		"negative":     {[]SpaceOption{WithShared(-1)}, "shared"},
		"too-many":     {[]SpaceOption{WithShared(2)}, "below the 2 shared"},
		"no-shared":    {[]SpaceOption{WithIndicators(ind)}, "has dimension 1 but its indicator vector has 0 ones"},
		"ragged":       {[]SpaceOption{WithIndicators([][]int{{0, 0}, {1}, {0, 1}, {1, 1}}), WithShared(1)}, "has length 1"},
		"not-0-1":      {[]SpaceOption{WithIndicators([][]int{{0, 0}, {2, 0}, {0, 1}, {1, 1}}), WithShared(1)}, "want 0 or 1"},
		"ones":         {[]SpaceOption{WithIndicators([][]int{{1, 0}, {0, 0}, {0, 1}, {1, 1}}), WithShared(1)}, "has dimension 1 but its indicator vector has 1 ones"},
		"hack+shared":  {[]SpaceOption{WithIndicators(hack), WithShared(1)}, "1 ones and the space 1 shared"},
		"positions":    {[]SpaceOption{WithPositions(IndicatorPositions(hack)), WithShared(1)}, "own coordinates"},
		"saturated":    {[]SpaceOption{WithPositions(IndicatorPositions(ind)), WithShared(1), WithSaturatedDim(2)}, "below the 3"},
		"positions-ok": {[]SpaceOption{WithPositions(IndicatorPositions(ind)), WithShared(1), WithSaturatedDim(3)}, ""},
	} {
		_, err := NewSpace(models, c.opts...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one about %q", name, err, c.want)
		}
	}
}
