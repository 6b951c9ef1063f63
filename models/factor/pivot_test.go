package factor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
)

// PivotModel's density is NewModel's at the point flipped to a positive
// diagonal, plus log Π β_pivot − log Π |β_jj|; the pivot constraint does
// not depend on which sign copy that point came from; the gradient
// matches finite differences; Constrain gives the loadings their signs.
func TestPivotModel(t *testing.T) {
	y, err := DefaultData()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Factors() {
		pm, err := NewPivotModel(y, DefaultPivots[k])
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewModel(y, k)
		if err != nil {
			t.Fatal(err)
		}
		lay := pm.lay
		rng := rand.New(rand.NewPCG(3, uint64(k)))
		x := make([]float64, pm.Dim())
		for trial := 0; trial < 5; trial++ {
			if err := pm.Init(rng, x); err != nil {
				t.Fatal(err)
			}
			// Move off the initial point, keeping the diagonal's sign.
			for i := range x {
				x[i] += 0.3 * rng.NormFloat64()
			}
			lp, err := pm.LogDensity(x)
			if err != nil {
				t.Fatal(err)
			}
			// NewModel's point and the Jacobian by hand.
			b := lay.Loadings(make([]float64, lay.Dim()), nil) // zero matrix of the right shape
			for j := 0; j < k; j++ {
				for i := j; i < lay.P; i++ {
					v := x[pm.pos(i, j)]
					if i == pivotRow(pm, j) {
						v = math.Exp(v)
					}
					b.Set(i, j, v)
				}
			}
			u := append([]float64(nil), x...)
			want := 0.0
			for j := 0; j < k; j++ {
				s := math.Copysign(1, b.At(j, j))
				want += math.Log(b.At(pivotRow(pm, j), j)) - math.Log(math.Abs(b.At(j, j)))
				u[lay.LogDiag[j]] = math.Log(math.Abs(b.At(j, j)))
				for i := j + 1; i < lay.P; i++ {
					u[lay.Lower[i][j]] = s * b.At(i, j)
				}
			}
			lm, err := m.LogDensity(u)
			if err != nil {
				t.Fatal(err)
			}
			want += lm
			if math.Abs(lp-want) > 1e-9*math.Abs(want) {
				t.Errorf("k=%d: log density %v, want %v", k, lp, want)
			}

			grad := make([]float64, pm.Dim())
			lg, err := pm.LogDensityGrad(x, grad)
			if err != nil || lg != lp {
				t.Fatalf("k=%d: LogDensityGrad %v (%v), LogDensity %v", k, lg, err, lp)
			}
			num := fd.Gradient(nil, func(v []float64) float64 {
				l, _ := pm.LogDensity(v)
				return l
			}, x, &fd.Settings{Formula: fd.Central, Step: 1e-6})
			if !floats.EqualApprox(grad, num, 1e-4*math.Max(1, floats.Norm(num, math.Inf(1)))) {
				t.Errorf("k=%d: gradient %v, finite differences %v", k, grad, num)
			}

			c := make([]float64, len(pm.ParamNames()))
			if err := pm.Constrain(x, c); err != nil {
				t.Fatal(err)
			}
			for _, bj := range pm.bIdx {
				// bIdx lists B's entries in NewModel's order: check each
				// against b through its name.
				var i, j int
				if _, err := fmt.Sscanf(pm.ParamNames()[bj[0]], "B.%d.%d", &i, &j); err != nil {
					t.Fatal(err)
				}
				if got, w := c[bj[0]], b.At(i-1, j-1); math.Abs(got-w) > 1e-12*math.Max(1, math.Abs(w)) {
					t.Errorf("k=%d: Constrain gives %s = %v, want %v", k, pm.ParamNames()[bj[0]], got, w)
				}
			}
		}
	}
}

func pivotRow(pm *PivotModel, j int) int { return pm.pivots[j] }
