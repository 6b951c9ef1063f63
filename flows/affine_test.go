package flows

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestAffine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Correlated draws θ = μ + A z with weights.
	mu := []float64{1, -2, 0.5}
	a := [][]float64{{1, 0, 0}, {0.8, 0.5, 0}, {-0.3, 0.2, 2}}
	x := make([][]float64, 400)
	w := make([]float64, len(x))
	for r := range x {
		z := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		x[r] = make([]float64, 3)
		for i := range mu {
			x[r][i] = mu[i]
			for j := range z {
				x[r][i] += a[i][j] * z[j]
			}
		}
		w[r] = 0.5 + rng.Float64()
	}
	f, err := FitAffine(x, w)
	if err != nil {
		t.Fatal(err)
	}
	// The weighted mean of the pushed samples is 0 and their weighted
	// covariance the identity, up to the n−1 correction of the estimator.
	zs := make([]float64, 3)
	sum := make([]float64, 3)
	var sw float64
	for r, row := range x {
		if _, err := f.Forward(row, zs); err != nil {
			t.Fatal(err)
		}
		for i := range zs {
			sum[i] += w[r] * zs[i]
		}
		sw += w[r]
	}
	for i := range sum {
		if math.Abs(sum[i]/sw) > 1e-12 {
			t.Errorf("weighted mean of z[%d] = %v", i, sum[i]/sw)
		}
	}
	theta, z, back := []float64{0.3, 1, -1}, make([]float64, 3), make([]float64, 3)
	ldF, _ := f.Forward(theta, z)
	ldI, _ := f.Inverse(z, back)
	for i := range theta {
		if math.Abs(back[i]-theta[i]) > 1e-12 {
			t.Errorf("round trip %v → %v", theta, back)
		}
	}
	if math.Abs(ldF+ldI) > 1e-12 {
		t.Errorf("log-dets %v and %v", ldF, ldI)
	}
	want := fdLogDet(t, func(out, in []float64) error { _, err := f.Forward(in, out); return err }, theta)
	if math.Abs(ldF-want) > 1e-7 {
		t.Errorf("log|det J| = %v, finite differences %v", ldF, want)
	}
	if n := testing.AllocsPerRun(10, func() { f.Forward(theta, z); f.Inverse(z, back) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestAffineSingular(t *testing.T) {
	// Second coordinate is a multiple of the first.
	x := [][]float64{{1, 2}, {2, 4}, {3, 6}, {4, 8}}
	if _, err := FitAffine(x, nil); !errors.Is(err, ErrSingular) {
		t.Errorf("collinear samples: error %v, want ErrSingular", err)
	}
	if _, err := FitAffine([][]float64{{1, 2}, {3, 4}}, nil); !errors.Is(err, ErrSingular) {
		t.Errorf("too few samples: error %v, want ErrSingular", err)
	}
	if _, err := FitAffine([][]float64{{1}, {2}, {3}}, []float64{1, -1, 1}); err == nil {
		t.Error("negative weight accepted")
	}
}
