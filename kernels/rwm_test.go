package kernels

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trjgo/trj/internal/checks"
)

func TestRWMGaussians(t *testing.T) {
	// Random-walk chains need to be long relative to their
	// autocorrelation time for the ESS, and so the MCSE, to be reliable.
	draws := checks.Size(10000, 5000)
	for _, tc := range gaussianCases() {
		for _, adaptCov := range []bool{false, true} {
			if !adaptCov && tc.name != "isotropic10" {
				// A scalar scale cannot mix across scales of 10⁴ or a
				// 0.99 correlation in a test's budget.
				continue
			}
			name := tc.name + "/scale"
			if adaptCov {
				name = tc.name + "/cov"
			}
			t.Run(name, func(t *testing.T) {
				// From a start scaled to the narrowest coordinate, the
				// covariance estimate grows toward the widest (10⁴ times
				// wider) over several windows, hence the long warm-up.
				g := newGaussian(t, tc.mean, tc.cov)
				res, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{
					Method: RWMMethod{Adapt: RWMAdaptConfig{AdaptCovariance: adaptCov}}, Chains: 4, Warmup: 10000, Draws: draws, Seed: 21,
				})
				if err != nil {
					t.Fatal(err)
				}
				vari := make([]float64, len(tc.mean))
				for i := range vari {
					vari[i] = tc.cov.At(i, i)
				}
				checkGaussian(t, name, chainDraws(res), tc.mean, vari)
				acc := 0.0
				for _, c := range res.Chains {
					for _, in := range c.Info {
						acc += in.AcceptStat
					}
				}
				acc /= float64(4 * draws)
				// The scale adapts to 0.234 only in expectation; a wide band
				// catches a broken adaptation, not noise.
				if acc < 0.15 || acc > 0.35 {
					t.Errorf("mean acceptance %.3f, want near 0.234", acc)
				}
			})
		}
	}
}

func TestRWMConjugateNormal(t *testing.T) {
	m := newConjugate()
	postMean, postVar := m.posterior()
	res, err := Sample(context.Background(), func(int) (Target, error) { return m, nil }, &SampleSettings{Method: RWMMethod{}, Chains: 4, Warmup: 500, Draws: 3000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkGaussian(t, "conjugate", chainDraws(res), []float64{postMean}, []float64{postVar})
}

// TestRWMFixedCovariance runs the N(0, s²Σ) mode the TRJ kernels use for
// within-model moves, with no adaptation.
func TestRWMFixedCovariance(t *testing.T) {
	tc := gaussianCases()[1]
	g := newGaussian(t, tc.mean, tc.cov)
	k, err := NewRWM(g, 2.38/math.Sqrt(2), tc.cov)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 0))
	var chains [][]float64
	for c := 0; c < 4; c++ {
		s, err := k.Init([]float64{0, 0})
		if err != nil {
			t.Fatal(err)
		}
		var d []float64
		for i := 0; i < 4000; i++ {
			s, _ = k.Step(rng, s)
			d = append(d, s.Position...)
		}
		chains = append(chains, d)
	}
	checkGaussian(t, "fixed", chains, tc.mean, []float64{1, 1})
	cov := k.Covariance()
	if math.Abs(cov.At(0, 1)-0.99) > 1e-12 {
		t.Errorf("Covariance()[0,1] = %v, want 0.99", cov.At(0, 1))
	}
}

func TestRWMStepAllocs(t *testing.T) {
	tc := gaussianCases()[1]
	g := newGaussian(t, tc.mean, tc.cov)
	k, err := NewRWM(g, 1, tc.cov)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := k.Init([]float64{0, 0})
	rng := rand.New(rand.NewPCG(1, 1))
	if a := testing.AllocsPerRun(200, func() { s, _ = k.Step(rng, s) }); a != 0 {
		t.Errorf("%v allocations per RWM step", a)
	}
}

func TestRWMTargetErrorsAreRejections(t *testing.T) {
	for _, nan := range []bool{false, true} {
		testRWMRejections(t, failing{n: 2, nan: nan})
	}
}

func testRWMRejections(t *testing.T, f failing) {
	k, err := NewRWM(f, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := k.Init([]float64{0, 0})
	rng := rand.New(rand.NewPCG(1, 3))
	rejected := 0
	for i := 0; i < 1000; i++ {
		var info RWMInfo
		s, info = k.Step(rng, s)
		if s.Position[0] > 1 {
			t.Fatalf("moved outside the support: %v", s.Position)
		}
		if info.AcceptProb == 0 {
			rejected++
		}
	}
	if rejected == 0 {
		t.Error("no proposal outside the support was rejected")
	}
	if _, err := NewRWM(failing{n: 2}, -1, nil); err == nil {
		t.Error("negative scale accepted")
	}
	if err := k.SetCovariance(diagCov([]float64{1, 1, 1})); err == nil {
		t.Error("covariance of wrong dimension accepted")
	}
}
