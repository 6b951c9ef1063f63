package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

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

// The bridge estimate of a known normalising constant (a standard normal
// density in 17 dimensions scaled by e^5) is within 4 of its SEs, and its
// SE is not far from the spread over seeds.
func TestBridgeKnownConstant(t *testing.T) {
	const n, m, logC = 17, 4000, 5.0
	mu := make([]float64, n)
	cov := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		mu[i] = 0.2
		cov.SetSym(i, i, 1.3)
	}
	q, err := newMVT(mu, cov, 4)
	if err != nil {
		t.Fatal(err)
	}
	logp := func(x []float64) float64 {
		return logC - 0.5*floats.Dot(x, x) - float64(n)/2*math.Log(2*math.Pi)
	}
	var zs []float64
	for seed := uint64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		z := make([]float64, n)
		lp1, lq1 := make([]float64, m), make([]float64, m)
		lp2, lq2 := make([]float64, m), make([]float64, m)
		x := make([]float64, n)
		for i := 0; i < m; i++ {
			for j := range x {
				x[j] = rng.NormFloat64()
			}
			lp1[i], lq1[i] = logp(x), q.logProb(x, z)
			q.rand(rng, z, x)
			lp2[i], lq2[i] = logp(x), q.logProb(x, z)
		}
		b := bridge(lp1, lq1, lp2, lq2, m)
		zs = append(zs, (b.LogZ-logC)/b.SE)
		if math.Abs(b.LogZ-logC) > 4*b.SE {
			t.Errorf("seed %d: log Z %v ± %v, want %v", seed, b.LogZ, b.SE, logC)
		}
	}
	sd := stat.StdDev(zs, nil)
	t.Logf("z-score sd over 10 seeds: %.2f", sd)
	if sd > 2 {
		t.Errorf("z-scores over seeds have sd %v: the SE is too small", sd)
	}
}

// The folded model is 2^k times the sign-free density inside the wall and
// rejects points outside it; its Init lands inside.
func TestFolded(t *testing.T) {
	y, err := factor.DefaultData()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range factor.Factors() {
		f, err := newFolded(y, k)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, uint64(k)))
		x := make([]float64, f.Dim())
		if err := f.Init(rng, x); err != nil {
			t.Fatal(err)
		}
		lf, err := f.LogDensity(x)
		if err != nil {
			t.Fatalf("k=%d: Init's point is outside: %v", k, err)
		}
		ls, _ := f.signFree.LogDensity(x)
		if d := lf - ls - float64(k)*math.Ln2; math.Abs(d) > 1e-9 {
			t.Errorf("k=%d: folded − sign-free log density − k·log 2 = %v, want 0", k, d)
		}
		flipColumn(f.lay, x, k-1)
		if _, err := f.LogDensity(x); err == nil {
			t.Errorf("k=%d: a point with a negative pivot is not rejected", k)
		}
	}
}
