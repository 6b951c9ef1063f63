package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGLMRowKernels checks dotRows and axpyRows (assembly where the
// processor has it) against plain loops, for every column count up to 19
// and a few wide ones, and row counts that leave each remainder of four.
func TestGLMRowKernels(t *testing.T) {
	t.Logf("AVX2/FMA row kernels: %v", haveAVX2FMA)
	rng := rand.New(rand.NewPCG(5, 5))
	dims := []int{32, 37, 100}
	for d := 1; d <= 19; d++ {
		dims = append(dims, d)
	}
	for _, d := range dims {
		for _, n := range []int{1, 3, 4, 5, 8, 11, 64} {
			x := randVec(rng, n*d, 1)
			beta := randVec(rng, d, 1)
			r := randVec(rng, n, 1)
			wantDot := make([]float64, n)
			wantG := randVec(rng, d, 1)
			g0 := append([]float64(nil), wantG...)
			for i := 0; i < n; i++ {
				for j := 0; j < d; j++ {
					wantDot[i] += x[i*d+j] * beta[j]
					wantG[j] += r[i] * x[i*d+j]
				}
			}
			for _, k := range []struct {
				name string
				dot  func(x []float64, d int, beta, out []float64)
				axpy func(x []float64, d int, r, g []float64)
			}{{"dispatch", dotRows, axpyRows}, {"go", dotRowsGo, axpyRowsGo}} {
				// Guard entries beyond the slices catch stray writes.
				out := make([]float64, n+1)
				out[n] = 7
				k.dot(x, d, beta, out[:n])
				g := append(append([]float64(nil), g0...), 7)
				k.axpy(x, d, r, g[:d])
				if out[n] != 7 || g[d] != 7 {
					t.Fatalf("%s d=%d n=%d: wrote past the output", k.name, d, n)
				}
				for i := range wantDot {
					if !closeTo(out[i], wantDot[i], 1e-13) {
						t.Fatalf("%s d=%d n=%d: dot[%d] = %v, want %v", k.name, d, n, i, out[i], wantDot[i])
					}
				}
				for j := range wantG {
					if !closeTo(g[j], wantG[j], 1e-13) {
						t.Fatalf("%s d=%d n=%d: g[%d] = %v, want %v", k.name, d, n, j, g[j], wantG[j])
					}
				}
			}
		}
	}
}

// TestFastExp compares fastExp with math.Exp over its whole range, at its
// edges and at special values.
func TestFastExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	worst := 0.0
	check := func(x float64) {
		got, want := fastExp(x), math.Exp(x)
		if math.IsNaN(want) != math.IsNaN(got) || math.IsInf(want, 0) && got != want {
			t.Fatalf("fastExp(%v) = %v, want %v", x, got, want)
		}
		if want != 0 && !math.IsInf(want, 0) && !math.IsNaN(want) {
			worst = math.Max(worst, math.Abs(got-want)/want)
		}
	}
	for i := 0; i < 200000; i++ {
		check((rng.Float64()*2 - 1) * 720)
		check((rng.Float64()*2 - 1) * 2)
	}
	for _, x := range []float64{0, math.Copysign(0, -1), 1, -1, 1e-300, -707.99, -708, -708.01, 708.99, 709, 709.7, 710, -745.2, -746,
		math.Inf(1), math.Inf(-1), math.NaN(), math.Ln2 / 128, -math.Ln2 / 128} {
		check(x)
	}
	if worst > 1e-15 {
		t.Errorf("fastExp: worst relative error %.3g, want ≤ 1e-15", worst)
	}
	t.Logf("fastExp: worst relative error %.3g", worst)
}
