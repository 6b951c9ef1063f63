package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/datasets"
)

// TestDataAreGenerated checks that the embedded CSVs are this program's
// output, byte for byte.
func TestDataAreGenerated(t *testing.T) {
	for _, c := range []struct {
		name string
		d    dataset
	}{{datasets.SelectLinear, linearData()}, {datasets.SelectLogistic, logisticData()}} {
		b, err := datasets.ReadFile(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, c.d.csv()) {
			t.Errorf("%s differs from the generator's output; run go run ./bench/selectref -data", c.name)
		}
	}
}

// TestNIGEvidence checks the closed form against the density of the
// marginal of y, a multivariate t with 2a degrees of freedom, location 0
// and scale (b/a)(I + g X Xᵀ), an n×n computation by gonum's Cholesky.
func TestNIGEvidence(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, p = 7, 3
	d := design{n: n, p: p, x: make([][]float64, n), y: make([]float64, n)}
	for i := range n {
		d.x[i] = []float64{1, r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		d.y[i] = 1 + r.NormFloat64()
	}
	gr := newGram(d)
	pr := NIGPrior{G: 2.5, A: 1.5, B: 0.7}
	buf, v := newBuf(p + 1)
	for _, cols := range [][]int{{0}, {0, 2}, {0, 1, 3}, {0, 1, 2, 3}} {
		got := nigLogEvidence(gr, n, pr, cols, buf, v)
		sigma := mat.NewSymDense(n, nil)
		for i := range n {
			for j := range n {
				s := 0.0
				if i == j {
					s = 1
				}
				for _, c := range cols {
					s += pr.G * d.x[i][c] * d.x[j][c]
				}
				sigma.SetSym(i, j, s*pr.B/pr.A)
			}
		}
		if want := logStudentsT(t, d.y, sigma, 2*pr.A); math.Abs(got-want) > 1e-10 {
			t.Errorf("cols %v: closed form %.12g, multivariate t %.12g", cols, got, want)
		}
	}
}

// TestGPriorEvidence checks the g-prior formula against the NIG evidence
// of the same model: with the g-prior covariance σ² g (XcᵀXc)⁻¹, a flat
// intercept and σ² ~ InverseGamma(a→0, b→0), the evidence ratio of two
// models equals the ratio of the formula's values. Here it is checked by
// direct integration over σ² of the Gaussian marginal.
func TestGPriorEvidence(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, p = 9, 2
	ds := dataset{y: make([]float64, n), x: make([][]float64, n)}
	for i := range n {
		ds.x[i] = []float64{r.NormFloat64(), r.NormFloat64()}
		ds.y[i] = 0.5*ds.x[i][0] + r.NormFloat64()
	}
	gc := centredGram(ds)
	const g = 4.0
	buf, v := newBuf(p + 1)
	// Direct: centred y, y | σ² ~ N(0, σ²(I − J/n + g H)) restricted to
	// the centred subspace; with R² known the marginal over σ² with
	// p(σ²) ∝ 1/σ² is ∝ |I + g Xc(XcᵀXc)⁻¹Xcᵀ|^(−1/2) (yᵀ(I+gH)⁻¹y)^(−(n−1)/2)
	// = (1+g)^(−k/2) (S (1 − g/(1+g) R²))^(−(n−1)/2).
	syy := gc.yty
	direct := func(k int, r2 float64) float64 {
		return -float64(k)/2*math.Log1p(g) - float64(n-1)/2*math.Log(syy*(1-g/(1+g)*r2))
	}
	r2 := func(cols []int) float64 {
		if len(cols) == 0 {
			return 0
		}
		x := mat.NewDense(n, len(cols), nil)
		y := mat.NewVecDense(n, nil)
		var ym float64
		for i := range n {
			ym += ds.y[i] / n
		}
		for i := range n {
			y.SetVec(i, ds.y[i]-ym)
			for k, c := range cols {
				var m float64
				for q := range n {
					m += ds.x[q][c-1] / n
				}
				x.Set(i, k, ds.x[i][c-1]-m)
			}
		}
		var b mat.VecDense
		if err := b.SolveVec(x, y); err != nil {
			t.Fatal(err)
		}
		var fit mat.VecDense
		fit.MulVec(x, &b)
		return mat.Dot(&fit, &fit) / mat.Dot(y, y)
	}
	base := gPriorLogEvidence(gc, n, g, nil, buf, v) - direct(0, 0)
	for _, cols := range [][]int{{1}, {2}, {1, 2}} {
		got := gPriorLogEvidence(gc, n, g, cols, buf, v) - base
		if want := direct(len(cols), r2(cols)); math.Abs(got-want) > 1e-10 {
			t.Errorf("cols %v: %.12g, want %.12g", cols, got, want)
		}
	}
}

// TestLogisticIS checks the importance-sampling evidence of small logistic
// models against quadrature: the intercept-only model in one dimension.
func TestLogisticIS(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 40
	m := &logitModel{n: n, d: 1, x: make([]float64, n), y: make([]float64, n), prec: []float64{1.0 / 4}}
	for i := range n {
		m.x[i] = 1
		if r.Float64() < 0.3 {
			m.y[i] = 1
		}
	}
	eta := make([]float64, n)
	f := func(b float64) float64 {
		return math.Exp(m.logPost([]float64{b}, eta) + 0.5*math.Log(m.prec[0]/(2*math.Pi)))
	}
	want := math.Log(quad.Fixed(f, -8, 6, 2000, nil, 0))
	est, err := m.logEvidenceIS(isSettings{Draws: 4000, Nu: 5, Seed: 1}, rand.New(rand.NewPCG(7, 8)))
	if err != nil {
		t.Fatal(err)
	}
	if z := (est.logZ - want) / est.relSE; math.Abs(z) > 4 {
		t.Errorf("IS log evidence %.6f ± %.6f, quadrature %.6f (z = %.2f)", est.logZ, est.relSE, want, z)
	}
	if est.relSE > 0.02 {
		t.Errorf("relative SE %.4f", est.relSE)
	}
}

// logStudentsT is the log density at y of the multivariate t with nu
// degrees of freedom, location 0 and scale sigma.
func logStudentsT(t *testing.T, y []float64, sigma *mat.SymDense, nu float64) float64 {
	var ch mat.Cholesky
	if !ch.Factorize(sigma) {
		t.Fatal("scale not positive definite")
	}
	n := float64(len(y))
	var s mat.VecDense
	if err := ch.SolveVecTo(&s, mat.NewVecDense(len(y), y)); err != nil {
		t.Fatal(err)
	}
	q := mat.Dot(&s, mat.NewVecDense(len(y), y))
	l1, _ := math.Lgamma((nu + n) / 2)
	l2, _ := math.Lgamma(nu / 2)
	return l1 - l2 - n/2*math.Log(nu*math.Pi) - 0.5*ch.LogDet() - (nu+n)/2*math.Log1p(q/nu)
}

// TestLogisticIS2D checks the importance-sampling evidence of an
// intercept-and-slope model against a two-dimensional midpoint rule over
// ±10 posterior standard deviations around the mode.
func TestLogisticIS2D(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 60
	m := &logitModel{n: n, d: 2, x: make([]float64, 2*n), y: make([]float64, n), prec: []float64{1.0 / 100, 1.0 / 6.25}}
	for i := range n {
		x := r.NormFloat64()
		m.x[2*i], m.x[2*i+1] = 1, x
		if r.Float64() < 1/(1+math.Exp(-(0.3+0.8*x))) {
			m.y[i] = 1
		}
	}
	mu, l, err := m.mode()
	if err != nil {
		t.Fatal(err)
	}
	// Posterior sds from the inverse of L Lᵀ.
	var h mat.SymDense
	lm := mat.NewTriDense(2, mat.Lower, []float64{l[0], 0, l[2], l[3]})
	h.SymOuterK(1, lm)
	var cov mat.Dense
	if err := cov.Inverse(&h); err != nil {
		t.Fatal(err)
	}
	s0, s1 := math.Sqrt(cov.At(0, 0)), math.Sqrt(cov.At(1, 1))
	const k = 400
	eta := make([]float64, n)
	lnorm := 0.5*math.Log(m.prec[0]/(2*math.Pi)) + 0.5*math.Log(m.prec[1]/(2*math.Pi))
	var sum float64
	h0, h1 := 20*s0/k, 20*s1/k
	for a := range k {
		for b := range k {
			beta := []float64{mu[0] - 10*s0 + (float64(a)+0.5)*h0, mu[1] - 10*s1 + (float64(b)+0.5)*h1}
			sum += math.Exp(m.logPost(beta, eta) + lnorm)
		}
	}
	want := math.Log(sum * h0 * h1)
	est, err := m.logEvidenceIS(isSettings{Draws: 4000, Nu: 5, Seed: 1}, rand.New(rand.NewPCG(13, 14)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("IS %.6f ± %.6f, quadrature %.6f", est.logZ, est.relSE, want)
	if z := (est.logZ - want) / est.relSE; math.Abs(z) > 4 {
		t.Errorf("IS log evidence %.6f ± %.6f, quadrature %.6f (z = %.2f)", est.logZ, est.relSE, want, z)
	}
}
