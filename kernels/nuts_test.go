package kernels

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/internal/checks"
)

type gaussianCase struct {
	name string
	mean []float64
	cov  *mat.SymDense
}

func gaussianCases() []gaussianCase {
	iso := make([]float64, 10)
	isoSD := make([]float64, 10)
	for i := range iso {
		iso[i] = float64(i) - 4.5
		isoSD[i] = 1
	}
	corr := mat.NewSymDense(2, []float64{1, 0.99, 0.99, 1})
	ill := []float64{1e-2, 1e-1, 1, 1e1, 1e2}
	return []gaussianCase{
		{"isotropic10", iso, diagCov(isoSD)},
		{"corr0.99", []float64{1, -1}, corr},
		{"illscaled", []float64{0, 0.5, -1, 3, 10}, diagCov(ill)},
	}
}

func gaussianFactory(g *gaussian) func(int) (Target, error) {
	return func(int) (Target, error) { return g.clone(), nil }
}

func TestNUTSGaussians(t *testing.T) {
	draws := checks.Size(1000, 500)
	for _, tc := range gaussianCases() {
		for _, metric := range []MetricKind{DiagMetric, DenseMetric} {
			t.Run(tc.name+"/"+metric.String(), func(t *testing.T) {
				g := newGaussian(t, tc.mean, tc.cov)
				res, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{
					Chains: 4, Warmup: 500, Draws: draws, Seed: 7,
					Method: NUTSMethod{Adapt: NUTSAdaptConfig{Metric: metric}},
				})
				if err != nil {
					t.Fatal(err)
				}
				vari := make([]float64, len(tc.mean))
				for i := range vari {
					vari[i] = tc.cov.At(i, i)
				}
				checkGaussian(t, tc.name, chainDraws(res), tc.mean, vari)
				div := 0
				for _, c := range res.Chains {
					for _, in := range c.Info {
						if in.Divergent {
							div++
						}
					}
				}
				if div > 0 {
					t.Errorf("%d divergences on a Gaussian", div)
				}
			})
		}
	}
}

// TestNUTSConjugateNormal checks the exact posterior of μ given normal
// data with known σ and a normal prior on μ.
func TestNUTSConjugateNormal(t *testing.T) {
	m := newConjugate()
	postMean, postVar := m.posterior()
	res, err := Sample(context.Background(), func(int) (Target, error) { return m, nil }, &SampleSettings{Chains: 4, Warmup: 300, Draws: 1000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkGaussian(t, "conjugate", chainDraws(res), []float64{postMean}, []float64{postVar})
}

func TestNUTSDeterministic(t *testing.T) {
	g := newGaussian(t, []float64{0, 1, 2}, mat.NewSymDense(3, []float64{2, 0.5, 0, 0.5, 1, 0.3, 0, 0.3, 1}))
	run := func() *SampleResult {
		res, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{Chains: 3, Warmup: 150, Draws: 100, Seed: 11})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a := run()
	prev := runtimeGOMAXPROCS(1)
	b := run()
	runtimeGOMAXPROCS(prev)
	for c := range a.Chains {
		ac, bc := a.Chains[c], b.Chains[c]
		for i := range ac.Draws {
			if ac.Draws[i] != bc.Draws[i] {
				t.Fatalf("chain %d: draw value %d differs: %v vs %v", c, i, ac.Draws[i], bc.Draws[i])
			}
		}
		for i := range ac.Info {
			if ac.Info[i] != bc.Info[i] {
				t.Fatalf("chain %d: info %d differs", c, i)
			}
		}
	}
	if a.Chains[0].Draws[0] == a.Chains[1].Draws[0] {
		t.Error("chains 0 and 1 share a stream")
	}
}

func TestNUTSFunnelDivergences(t *testing.T) {
	// Deep in the neck of Neal's funnel a step size tuned to the mouth
	// must blow up, and the kernel must say so and stay put.
	k, err := NewNUTS(funnel{n: 10}, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 10)
	x[0] = -8
	for i := 1; i < 10; i++ {
		x[i] = 0.01 * float64(i%3-1)
	}
	s, err := k.Init(x)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 0))
	div := 0
	for i := 0; i < 20; i++ {
		var info NUTSInfo
		s, info = k.Step(rng, s)
		if info.Divergent {
			div++
		}
		if math.IsNaN(s.LogDensity) || math.IsInf(s.LogDensity, 0) {
			t.Fatalf("non-finite state after divergence: %v", s.LogDensity)
		}
	}
	if div == 0 {
		t.Error("no divergences in the neck of the funnel at step size 0.5")
	}

	// Adaptive runs report divergences through the runner too.
	res, err := Sample(context.Background(), func(int) (Target, error) { return funnel{n: 10}, nil }, &SampleSettings{Chains: 2, Warmup: 300, Draws: 300, Seed: 5, SaveWarmup: true})
	if err != nil {
		t.Fatal(err)
	}
	div = 0
	for _, c := range res.Chains {
		for _, in := range append(c.WarmupInfo, c.Info...) {
			if in.Divergent {
				div++
			}
		}
	}
	if div == 0 {
		t.Error("no divergences reported on Neal's funnel during warm-up and sampling")
	}
	t.Logf("funnel: %d divergences in 1200 iterations", div)
}

func TestNUTSTargetErrorsAreRejections(t *testing.T) {
	for _, nan := range []bool{false, true} {
		testNUTSRejections(t, failing{n: 2, nan: nan})
	}
}

func testNUTSRejections(t *testing.T, f failing) {
	k, err := NewNUTS(f, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := k.Init([]float64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		var info NUTSInfo
		s, info = k.Step(rng, s)
		if s.Position[0] > 1 || math.IsInf(s.LogDensity, 0) || math.IsNaN(s.LogDensity) {
			t.Fatalf("step %d: left the support: %v lp %v (info %+v)", i, s.Position, s.LogDensity, info)
		}
	}
	if _, err := k.Init([]float64{2, 0}); err == nil {
		t.Error("Init outside the support did not fail")
	}
	if _, err := k.Init([]float64{0}); err == nil {
		t.Error("Init with wrong length did not fail")
	}
}

func TestNUTSStepAllocs(t *testing.T) {
	for _, kind := range []MetricKind{DiagMetric, DenseMetric} {
		g := newGaussian(t, []float64{0, 1, 2, 3}, diagCov([]float64{1, 2, 3, 4}))
		var m *Metric
		if kind == DiagMetric {
			m, _ = NewDiagMetric([]float64{1, 4, 9, 16})
		} else {
			m, _ = NewDenseMetric(diagCov([]float64{1, 2, 3, 4}))
		}
		k, err := NewNUTS(g, 0.3, m)
		if err != nil {
			t.Fatal(err)
		}
		s, err := k.Init([]float64{0, 0, 0, 0})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		s, _ = k.Step(rng, s)
		allocs := testing.AllocsPerRun(200, func() { s, _ = k.Step(rng, s) })
		if allocs != 0 {
			t.Errorf("%v: %v allocations per NUTS step", kind, allocs)
		}
	}
}

func TestNewNUTSErrors(t *testing.T) {
	g := newGaussian(t, []float64{0, 0}, diagCov([]float64{1, 1}))
	if _, err := NewNUTS(g, 0, nil); err == nil {
		t.Error("zero step size accepted")
	}
	if _, err := NewNUTS(g, math.NaN(), nil); err == nil {
		t.Error("NaN step size accepted")
	}
	m, _ := NewUnitMetric(3)
	if _, err := NewNUTS(g, 1, m); err == nil {
		t.Error("metric of wrong dimension accepted")
	}
	if _, err := NewNUTS(nil, 1, nil); err == nil {
		t.Error("nil target accepted")
	}
	if _, err := NewDiagMetric([]float64{1, -1}); err == nil {
		t.Error("negative inverse mass accepted")
	}
	if _, err := NewDenseMetric(mat.NewSymDense(2, []float64{1, 2, 2, 1})); err == nil {
		t.Error("indefinite inverse mass accepted")
	}
	if _, err := NewDenseMetric(nil); err == nil {
		t.Error("nil inverse mass accepted")
	}
	if _, err := NewNUTSAdaptation(nil, 10, NUTSAdaptConfig{}); err == nil {
		t.Error("NewNUTSAdaptation: nil kernel accepted")
	}
	if _, err := NewRWMAdaptation(nil, 10, RWMAdaptConfig{}); err == nil {
		t.Error("NewRWMAdaptation: nil kernel accepted")
	}
	if j := UniformJumps(-1); len(j) != 0 {
		t.Errorf("UniformJumps(-1) = %v, want empty", j)
	}
}

func TestWindows(t *testing.T) {
	w := newWindows(1000, 75, 50, 25)
	want := []int{100, 150, 250, 450, 950}
	if len(w.ends) != len(want) {
		t.Fatalf("window ends %v, want %v", w.ends, want)
	}
	for i := range want {
		if w.ends[i] != want[i] {
			t.Fatalf("window ends %v, want %v", w.ends, want)
		}
	}
	if s, e := w.slow(74); s || e {
		t.Error("iteration 74 is in the initial buffer")
	}
	if s, e := w.slow(99); !s || !e {
		t.Error("iteration 99 ends the first window")
	}
	if s, _ := w.slow(950); s {
		t.Error("iteration 950 is in the terminal buffer")
	}
	small := newWindows(100, 75, 50, 25)
	if small.start != 15 || small.ends[len(small.ends)-1] != 90 {
		t.Errorf("short warm-up: start %d ends %v, want 15 and last 90", small.start, small.ends)
	}
}

// TestSkewedTarget checks NUTS and RWM on a product of log-gamma
// marginals, whose skewness a Gaussian test cannot probe.
func TestSkewedTarget(t *testing.T) {
	alpha := []float64{0.5, 1, 2, 5, 20}
	mean, vari := logGammaMoments(alpha)
	for _, alg := range []string{"nuts", "rwm"} {
		t.Run(alg, func(t *testing.T) {
			set := &SampleSettings{Chains: 4, Warmup: 500, Draws: 1000, Seed: 13}
			if alg == "rwm" {
				set.Warmup, set.Draws = 4000, 10000
				set.Method = RWMMethod{Adapt: RWMAdaptConfig{AdaptCovariance: true}}
			}
			res, err := Sample(context.Background(), func(int) (Target, error) { return logGamma{alpha}, nil }, set)
			if err != nil {
				t.Fatal(err)
			}
			checkGaussian(t, "log-gamma", chainDraws(res), mean, vari)
		})
	}
}
