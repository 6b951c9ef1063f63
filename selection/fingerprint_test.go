package selection

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/glmselect"
)

// TestFingerprintBlocks: above fingerprintFullP terms the fingerprint
// evaluates blocks of terms instead of the model of all of them, and
// still tells apart data that differ in one value of the first block's,
// a middle block's or the last (short) block's columns.
func TestFingerprintBlocks(t *testing.T) {
	const n, p = 30, fingerprintFullP + 2*fingerprintBlock + 1
	rng := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		for j := range p {
			X.Set(i, j, rng.NormFloat64())
		}
		y[i] = X.At(i, 0) + rng.NormFloat64()
	}
	d := new(Settings).withDefaults()
	fp := func(X *mat.Dense) string {
		sp, err := glmselect.Gaussian(X, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := fingerprint(sp, &d)
		return f
	}
	base := fp(X)
	if fp(X) != base {
		t.Fatal("the same data: two fingerprints")
	}
	for _, j := range []int{1, p / 2, p - 1} {
		Y := mat.DenseCopyOf(X)
		Y.Set(3, j, Y.At(3, j)+0.5)
		if fp(Y) == base {
			t.Errorf("a value of column %d changed: the same fingerprint", j)
		}
	}
}
