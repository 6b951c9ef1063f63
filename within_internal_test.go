package trj

import (
	"math"
	"strings"
	"testing"
)

func TestRWCovariances(t *testing.T) {
	p := &pilot{Train: [][]float64{{0, 1}, {2, 1}, {0, 3}, {2, 3}}}
	cov, err := rwCovariances([]*pilot{p, {Train: [][]float64{{}, {}}}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Sample variances 4/3 each, covariance 0; scale 2/n = 1.
	if v := cov[0].At(0, 0); math.Abs(v-4.0/3) > 1e-12 || cov[0].At(0, 1) != 0 || cov[1] != nil {
		t.Errorf("Σ₀ = %v, Σ₁ = %v", cov[0], cov[1])
	}
	for name, c := range map[string]struct {
		p    *pilot
		want string
	}{
		"few":      {&pilot{Train: [][]float64{{0, 1}, {2, 1}}}, "2 training draws cannot give"},
		"none":     {&pilot{}, "no training draws"},
		"singular": {&pilot{Train: [][]float64{{0, 0}, {1, 1}, {2, 2}}}, "singular"},
	} {
		if _, err := rwCovariances([]*pilot{c.p}, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
}

func TestSpread(t *testing.T) {
	var d [][]float64
	for i := range 10 {
		d = append(d, []float64{float64(i)})
	}
	if got := spread(d, 20); len(got) != 10 {
		t.Errorf("spread of 10 to 20: %d draws", len(got))
	}
	got := spread(d, 4)
	want := []float64{0, 2, 5, 7}
	for i, x := range got {
		if x[0] != want[i] {
			t.Errorf("spread of 10 to 4: %v, want %v", got, want)
			break
		}
	}
}
