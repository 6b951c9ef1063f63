package ad

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSubstituteRowBits checks the multi-column triangular solve against
// the row-at-a-time substitution it replaced, bit for bit, over sizes,
// triangles, transposes and zero coefficients.
func TestSubstituteRowBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	for _, n := range []int{1, 2, 5, 6, 9} {
		for _, m := range []int{2, 3, 4, 6, 7, 9} {
			for _, lower := range []bool{false, true} {
				for _, trans := range []bool{false, true} {
					tm := normals(rng, n*n)
					for i := range tm {
						if rng.IntN(4) == 0 {
							tm[i] = 0
						}
					}
					for i := 0; i < n; i++ {
						tm[i*n+i] = 1 + rng.Float64()
					}
					b := normals(rng, n*m)
					got := make([]float64, n*m)
					if !solveTriangular(got, tm, b, n, m, lower, trans) {
						t.Fatal("solve failed")
					}
					want := rowAtATimeSolve(tm, b, n, m, lower, trans)
					for i := range got {
						if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
							t.Fatalf("n=%d m=%d lower=%v trans=%v: x[%d] = %v, row at a time %v", n, m, lower, trans, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// rowAtATimeSolve is the former substitution: each solved row subtracted
// from row i in full, then row i scaled by the reciprocal of the diagonal.
func rowAtATimeSolve(t, b []float64, n, m int, lower, trans bool) []float64 {
	x := append([]float64(nil), b...)
	rs, cs := n, 1
	if trans {
		rs, cs = 1, n
	}
	row := func(i, lo, hi int) {
		xi := x[i*m : i*m+m]
		for j := lo; j < hi; j++ {
			if c := t[i*rs+j*cs]; c != 0 {
				for k := range xi {
					xi[k] -= c * x[j*m+k]
				}
			}
		}
		r := 1 / t[i*n+i]
		for k := range xi {
			xi[k] *= r
		}
	}
	if lower != trans {
		for i := 0; i < n; i++ {
			row(i, 0, i)
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			row(i, i+1, n)
		}
	}
	return x
}
