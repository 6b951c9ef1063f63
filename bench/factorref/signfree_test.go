package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/factor"
)

func newTestTarget(t *testing.T, k int) *signFree {
	t.Helper()
	y, err := factor.DefaultData()
	if err != nil {
		t.Fatal(err)
	}
	m, err := factor.NewModel(y, k)
	if err != nil {
		t.Fatal(err)
	}
	_, p := y.Dims()
	return newSignFree(m, factor.NewLayout(p, k))
}

// The sign-free density is the model's at the positive-diagonal point, less
// the log-diagonal's Jacobian and k·log 2; it is unchanged by flipping any
// column; its gradient matches finite differences.
func TestSignFree(t *testing.T) {
	for _, k := range []int{2, 3} {
		s := newTestTarget(t, k)
		rng := rand.New(rand.NewPCG(1, uint64(k)))
		th := make([]float64, s.Dim())
		for trial := 0; trial < 5; trial++ {
			if err := s.Init(rng, th); err != nil {
				t.Fatal(err)
			}
			lp, err := s.LogDensity(th)
			if err != nil {
				t.Fatal(err)
			}
			// The model's own density at the folded point.
			u := append([]float64(nil), th...)
			logJ := 0.0
			for j, d := range s.lay.LogDiag {
				if u[d] < 0 {
					flipColumn(s.lay, u, j)
				}
				logJ += math.Log(u[d])
				u[d] = math.Log(u[d])
			}
			want, err := s.m.LogDensity(u)
			if err != nil {
				t.Fatal(err)
			}
			want -= logJ + float64(k)*math.Ln2
			if math.Abs(lp-want) > 1e-9*math.Abs(want) {
				t.Errorf("k=%d: log density %v, want %v", k, lp, want)
			}
			for j := 0; j < k; j++ {
				f := append([]float64(nil), th...)
				flipColumn(s.lay, f, j)
				lf, err := s.LogDensity(f)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(lf-lp) > 1e-9*math.Abs(lp) {
					t.Errorf("k=%d: flipping column %d changes the log density from %v to %v", k, j, lp, lf)
				}
			}
			grad := make([]float64, s.Dim())
			lg, err := s.LogDensityGrad(th, grad)
			if err != nil {
				t.Fatal(err)
			}
			if lg != lp {
				t.Errorf("k=%d: LogDensityGrad %v, LogDensity %v", k, lg, lp)
			}
			num := fd.Gradient(nil, func(x []float64) float64 {
				v, _ := s.LogDensity(x)
				return v
			}, th, &fd.Settings{Formula: fd.Central, Step: 1e-6})
			if !floats.EqualApprox(grad, num, 1e-4*math.Max(1, floats.Norm(num, math.Inf(1)))) {
				t.Errorf("k=%d: gradient %v, finite differences %v", k, grad, num)
			}
		}
	}
}

// The symmetrised t mixture is a normalised density: its importance
// estimate of the integral of a standard normal density in θ's dimension
// is 1.
func TestSymMixNormalised(t *testing.T) {
	lay := factor.NewLayout(6, 2)
	n := lay.Dim()
	mu := make([]float64, n)
	for i := range mu {
		mu[i] = 0.5
	}
	cov := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		cov.SetSym(i, i, 1.5)
	}
	comp, err := newMVT(mu, cov, 4)
	if err != nil {
		t.Fatal(err)
	}
	q := newSymMix(lay, []*mvt{comp}, []float64{1}, 1, 0)
	const draws = 20000
	w := make([]float64, draws)
	th := make([]float64, n)
	for i := range w {
		q.Rand(th)
		lp := -0.5*floats.Dot(th, th) - float64(n)/2*math.Log(2*math.Pi)
		w[i] = math.Exp(lp - q.LogProb(th))
	}
	mean := floats.Sum(w) / draws
	sd := math.Sqrt(floats.Dot(w, w)/draws-mean*mean) / math.Sqrt(draws)
	if math.Abs(mean-1) > 4*sd {
		t.Errorf("∫ N(0, I) estimated as %v ± %v, want 1", mean, sd)
	}
}
