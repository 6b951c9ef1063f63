package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSubstituteUpBits checks substituteUp against the axpy-and-scale rows
// it replaced in choleskyGradInto, bit for bit.
func TestSubstituteUpBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for n := 1; n <= 9; n++ {
		l := make([]float64, n*n)
		g := make([]float64, n*n)
		for i := range l {
			l[i] = rng.NormFloat64()
			if rng.IntN(4) == 0 {
				l[i] = 0
			}
			g[i] = rng.NormFloat64()
		}
		for i := 0; i < n; i++ {
			l[i*n+i] = 1 + rng.Float64()
		}
		want := append([]float64(nil), g...)
		for i := n - 1; i >= 0; i-- {
			gi := want[i*n : i*n+n]
			for k := i + 1; k < n; k++ {
				if lki := l[k*n+i]; lki != 0 {
					axpy(gi, -lki, want[k*n:k*n+n])
				}
			}
			for j := range gi {
				gi[j] *= 1 / l[i*n+i]
			}
			substituteUp(g, l, i, n)
		}
		for i := range g {
			if math.Float64bits(g[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n=%d: g[%d] = %v, axpy rows %v", n, i, g[i], want[i])
			}
		}
	}
}
