package ops

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestBernoulliLogitBlockKernel checks that bernoulliLogitBlock (the AVX2
// kernel where the processor has it) gives the portable
// bernoulliLogitBlockGo's value and residuals bit for bit, on random rows
// and on edge values of η, for every block length from 1 to 13 (each
// remainder of four) and a full block, and that invalid outcomes are
// reported and NaN propagates.
func TestBernoulliLogitBlockKernel(t *testing.T) {
	t.Logf("AVX2/FMA kernels: %v", haveAVX2FMA)
	rng := rand.New(rand.NewPCG(26, 1))
	edges := []float64{0, math.Copysign(0, -1), 1e-300, -1e-300, 5e-324, -5e-324, 1e-17, -1e-17,
		0.5, -0.5, 30, -30, 37, -37, 700, -700, 700.5, -700.5, 800, -800, math.Inf(1), math.Inf(-1)}
	lengths := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, glmBlock}
	check := func(name string, eta, y []float64) {
		t.Helper()
		got := append([]float64(nil), eta...)
		want := append([]float64(nil), eta...)
		vg, errg := bernoulliLogitBlock(got, y)
		vw, errw := bernoulliLogitBlockGo(want, y)
		if (errg == nil) != (errw == nil) || errg != nil && !errors.Is(errg, ErrDomain) {
			t.Fatalf("%s: error %v, portable %v (eta %v, y %v)", name, errg, errw, eta, y)
		}
		if errw != nil {
			return
		}
		if !same(vg, vw) {
			t.Fatalf("%s: value %v, portable %v (eta %v, y %v)", name, vg, vw, eta, y)
		}
		for i := range got {
			if !same(got[i], want[i]) {
				t.Fatalf("%s: residual[%d] = %v, portable %v (eta %v, y %v)", name, i, got[i], want[i], eta[i], y[i])
			}
		}
	}
	for _, n := range lengths {
		for rep := 0; rep < 200; rep++ {
			eta, y := randomRows(rng, n, edges, 2)
			check("random", eta, y)
		}
		// Each edge value in every position, the others random.
		for _, v := range append(edges, math.NaN()) {
			for pos := 0; pos < n; pos++ {
				eta, y := normalRows(rng, n, 3, 2)
				eta[pos] = v
				for _, yv := range []float64{0, 1} {
					y[pos] = yv
					check("edge", eta, y)
				}
				if math.IsNaN(v) {
					got := append([]float64(nil), eta...)
					s, err := bernoulliLogitBlock(got, y)
					if err != nil || !math.IsNaN(s) || !math.IsNaN(got[pos]) {
						t.Fatalf("n=%d: NaN η at %d gave value %v, residual %v, error %v", n, pos, s, got[pos], err)
					}
				}
			}
		}
		// Invalid outcomes in every position.
		for _, yv := range []float64{0.5, 2, -1, math.NaN(), math.Inf(1)} {
			for pos := 0; pos < n; pos++ {
				eta, y := normalRows(rng, n, 1, 2)
				y[pos] = yv
				if _, err := bernoulliLogitBlock(eta, y); !errors.Is(err, ErrDomain) {
					t.Fatalf("n=%d: y[%d] = %v gave error %v, want ErrDomain", n, pos, yv, err)
				}
			}
		}
	}
}

// TestPoissonLogBlockKernel checks that poissonLogBlock (the AVX2 kernel
// where the processor has it) gives the portable poissonLogBlockGo's value
// and residuals bit for bit, with η in and outside the kernel's range
// (−700, 700), NaN included, for block lengths 1 to 13 and a full block.
func TestPoissonLogBlockKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 4))
	edges := []float64{0, math.Copysign(0, -1), 1e-300, -1e-300, 5e-324, 1e-17, -1e-17, 3.5, -3.5,
		699.99, -699.99, 700, -700, 708.9, 709.7, 710, -708.5, -745, -800, math.Inf(1), math.Inf(-1), math.NaN()}
	check := func(eta, y []float64) {
		t.Helper()
		got := append([]float64(nil), eta...)
		want := append([]float64(nil), eta...)
		vg, vw := poissonLogBlock(got, y), poissonLogBlockGo(want, y)
		if !same(vg, vw) {
			t.Fatalf("value %v, portable %v (eta %v, y %v)", vg, vw, eta, y)
		}
		for i := range got {
			if !same(got[i], want[i]) {
				t.Fatalf("residual[%d] = %v, portable %v (eta %v, y %v)", i, got[i], want[i], eta[i], y[i])
			}
		}
	}
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, glmBlock} {
		for rep := 0; rep < 200; rep++ {
			eta, y := randomRows(rng, n, edges, 20)
			check(eta, y)
		}
		for _, v := range edges {
			for pos := 0; pos < n; pos++ {
				eta, y := normalRows(rng, n, 2, 20)
				eta[pos] = v
				check(eta, y)
				if math.IsNaN(v) {
					s := poissonLogBlock(eta, y)
					if !math.IsNaN(s) || !math.IsNaN(eta[pos]) {
						t.Fatalf("n=%d: NaN η at %d gave value %v, residual %v", n, pos, s, eta[pos])
					}
				}
			}
		}
	}
}

// same reports whether a and b are the same float64 or both NaN.
func same(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

// BenchmarkBernoulliLogitBlock times one block of glmBlock rows, with the
// dispatching kernel and with the portable one.
func BenchmarkBernoulliLogitBlock(b *testing.B) {
	benchBlock(b, rand.New(rand.NewPCG(26, 2)), 3, 2, func(dispatch bool, eta, y []float64) error {
		var err error
		if dispatch {
			_, err = bernoulliLogitBlock(eta, y)
		} else {
			_, err = bernoulliLogitBlockGo(eta, y)
		}
		return err
	})
}

// BenchmarkPoissonLogBlock times one block of glmBlock rows, with the
// dispatching kernel and with the portable one.
func BenchmarkPoissonLogBlock(b *testing.B) {
	benchBlock(b, rand.New(rand.NewPCG(26, 5)), 1, 5, func(dispatch bool, eta, y []float64) error {
		if dispatch {
			poissonLogBlock(eta, y)
		} else {
			poissonLogBlockGo(eta, y)
		}
		return nil
	})
}

// benchBlock times run on one block of glmBlock rows (linear predictors
// normal with sd scale, outcomes uniform on 0, …, outcomes−1), as
// "dispatch" with the dispatching kernel and as "go" with the portable one.
func benchBlock(b *testing.B, rng *rand.Rand, scale float64, outcomes int, run func(dispatch bool, eta, y []float64) error) {
	eta0 := randVec(rng, glmBlock, scale)
	y := make([]float64, glmBlock)
	for i := range y {
		y[i] = float64(rng.IntN(outcomes))
	}
	eta := make([]float64, glmBlock)
	for _, dispatch := range []bool{true, false} {
		name := "go"
		if dispatch {
			name = "dispatch"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				copy(eta, eta0)
				if err := run(dispatch, eta, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// normalRows returns n linear predictors, normal with sd scale, and
// outcomes drawn uniformly from 0, …, outcomes−1.
func normalRows(rng *rand.Rand, n int, scale float64, outcomes int) (eta, y []float64) {
	eta, y = make([]float64, n), make([]float64, n)
	for i := range eta {
		eta[i] = scale * rng.NormFloat64()
		y[i] = float64(rng.IntN(outcomes))
	}
	return eta, y
}

// randomRows returns n linear predictors, each standard normal, normal
// with sd 10, uniform on (−800, 800) or one of edges, and outcomes drawn
// uniformly from 0, …, outcomes−1.
func randomRows(rng *rand.Rand, n int, edges []float64, outcomes int) (eta, y []float64) {
	eta, y = make([]float64, n), make([]float64, n)
	for i := range eta {
		switch rng.IntN(4) {
		case 0:
			eta[i] = rng.NormFloat64()
		case 1:
			eta[i] = 10 * rng.NormFloat64()
		case 2:
			eta[i] = (2*rng.Float64() - 1) * 800
		default:
			eta[i] = edges[rng.IntN(len(edges))]
		}
		y[i] = float64(rng.IntN(outcomes))
	}
	return eta, y
}
