package kernels

import (
	"math"
	"strings"
	"testing"
)

func TestRandomWalkCovariances(t *testing.T) {
	train := [][]float64{{0, 1}, {2, 1}, {0, 3}, {2, 3}}
	cov, err := RandomWalkCovariances([][][]float64{train, {{}, {}}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Sample variances 4/3 each, covariance 0; scale 2/n = 1.
	if v := cov[0].At(0, 0); math.Abs(v-4.0/3) > 1e-12 || cov[0].At(0, 1) != 0 || cov[1] != nil {
		t.Errorf("Σ₀ = %v, Σ₁ = %v", cov[0], cov[1])
	}
	for name, c := range map[string]struct {
		train [][]float64
		want  string
	}{
		"few":      {[][]float64{{0, 1}, {2, 1}}, "2 training draws cannot give"},
		"none":     {nil, "no training draws"},
		"singular": {[][]float64{{0, 0}, {1, 1}, {2, 2}}, "singular"},
	} {
		if _, err := RandomWalkCovariances([][][]float64{c.train}, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
}
