package mc3

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestChainMatchesEnumeration: on 6 terms (64 models) the chains' visit
// frequencies agree with the PIPs of the enumerated posterior within 4
// standard errors of the chains' spread, batched and not.
func TestChainMatchesEnumeration(t *testing.T) {
	const n, p = 40, 6
	r := rand.New(rand.NewPCG(1, 2))
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, p)
		for j := range x[i] {
			x[i][j] = r.NormFloat64()
		}
		x[i][2] = x[i][1] + 0.3*r.NormFloat64() // a correlated pair
		y[i] = x[i][0] + 0.5*x[i][1] + r.NormFloat64()
	}
	g := New(x, y)
	exact := make([]float64, p)
	var z float64
	L, v := make([]float64, p*p), make([]float64, p)
	for m := range 1 << p {
		var act []int
		for j := range p {
			if m>>j&1 == 1 {
				act = append(act, j)
			}
		}
		w := math.Exp(g.logPost(act, L, v))
		z += w
		for _, j := range act {
			exact[j] += w
		}
	}
	const chains = 8
	for _, batches := range []int{1, 10} {
		sum, sq := make([]float64, p), make([]float64, p)
		for c := range chains {
			f := g.Chain(7, c, 2000, 20000, batches)
			for j := range p {
				var m float64
				for b := range f {
					m += f[b][j] / float64(batches)
				}
				sum[j] += m
				sq[j] += m * m
			}
		}
		for j := range p {
			m := sum[j] / chains
			se := math.Sqrt((sq[j]/chains - m*m) / (chains - 1))
			if d := math.Abs(m - exact[j]/z); !(d <= 4*se) {
				t.Errorf("batches %d, term %d: PIP %.4f ± %.4f, enumeration %.4f", batches, j, m, se, exact[j]/z)
			}
		}
	}
}
