package bench

import (
	"fmt"
	"testing"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/checks"
)

// BenchmarkAffineEval times single-point Forward (θ → z) and Inverse
// (z → θ) of an affine flow fitted to correlated draws: graph (package
// flows, compiled ad programs) and hand (the frozen copy of
// affinehand_test.go), built from the same mean and Cholesky factor. Both
// must not allocate. The cases alternate graph and hand at each n and
// direction, so that their ratio is read within one run.
func BenchmarkAffineEval(b *testing.B) {
	for _, n := range flowDims {
		x := checks.CorrelatedGaussian(n, 512, uint64(n))
		g, err := flows.FitAffine(x, nil)
		if err != nil {
			b.Fatal(err)
		}
		h := newHandAffine(g.Mean(), g.CholeskyFactor())
		theta := append([]float64(nil), x[0]...)
		z, out := make([]float64, n), make([]float64, n)
		for _, dir := range []string{"forward", "inverse"} {
			for _, impl := range []string{"graph", "hand"} {
				var f point = g
				if impl == "hand" {
					f = h
				}
				f.Forward(theta, z)
				b.Run(fmt.Sprintf("%s/affine-%s/n=%d", impl, dir, n), func(b *testing.B) {
					if dir == "forward" {
						benchMap(b, f.Forward, theta, z)
					} else {
						benchMap(b, f.Inverse, z, out)
					}
				})
			}
		}
	}
}
