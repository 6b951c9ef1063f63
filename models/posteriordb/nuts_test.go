package posteriordb

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/diag"
)

// sampleNUTS runs short NUTS chains on m and returns each constrained
// column as chains × draws.
func sampleNUTS(t *testing.T, m *ppl.GraphModel, chains, warmup, n int, seed uint64) map[string][][]float64 {
	t.Helper()
	clones := make([]ppl.Model, chains)
	for c := range clones {
		clones[c] = m.Clone()
	}
	res, err := kernels.Sample(context.Background(),
		func(c int) (kernels.Target, error) { return clones[c], nil }, &kernels.SampleSettings{Init: func(c int, rng *rand.Rand, x []float64) error { return clones[c].Init(rng, x) }, Chains: chains, Warmup: warmup, Draws: n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	names := m.ParamNames()
	cols := make(map[string][][]float64, len(names))
	for _, name := range names {
		cols[name] = make([][]float64, chains)
	}
	x := make([]float64, len(names))
	for c, ch := range res.Chains {
		for i := range ch.Info {
			if err := m.Constrain(ch.Draw(i), x); err != nil {
				t.Fatal(err)
			}
			for j, name := range names {
				cols[name][c] = append(cols[name][c], x[j])
			}
		}
	}
	return cols
}

// checkMean checks that the chains' mean of a column is within 4 Monte
// Carlo standard errors of the exact posterior mean.
func checkMean(t *testing.T, name string, x [][]float64, truth float64) {
	t.Helper()
	var all []float64
	for _, c := range x {
		all = append(all, c...)
	}
	mean := floats.Sum(all) / float64(len(all))
	mcse, err := diag.MCSEMean(x)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if math.Abs(mean-truth) > 4*mcse {
		t.Errorf("%s: mean %.4f, exact %.4f, |diff| > 4·MCSE = %.4f", name, mean, truth, 4*mcse)
	} else {
		t.Logf("%s: mean %.4f, exact %.4f, MCSE %.4f", name, mean, truth, mcse)
	}
}

// eightSchoolsExact returns the exact posterior means of mu, tau and theta
// by quadrature: with θ integrated out, y_j ~ normal(μ, √(σ_j² + τ²)), and
// E[θ_j | μ, τ, y] is the precision-weighted mean of y_j and μ.
func eightSchoolsExact(y, sigma []float64) (mu, tau float64, theta []float64) {
	const (
		muLo, muHi, nMu = -40.0, 50.0, 700
		ltLo, ltHi, nLt = -12.0, 6.0, 700
	)
	var z float64
	theta = make([]float64, len(y))
	for i := 0; i < nMu; i++ {
		m := muLo + (float64(i)+0.5)*(muHi-muLo)/nMu
		for k := 0; k < nLt; k++ {
			lt := ltLo + (float64(k)+0.5)*(ltHi-ltLo)/nLt
			tu := math.Exp(lt)
			// log prior with the Jacobian of τ = e^lt, then the likelihood.
			lp := normal(m, 0, 5) + cauchy(tu, 0, 5) + lt
			for j := range y {
				lp += normal(y[j], m, math.Hypot(sigma[j], tu))
			}
			w := math.Exp(lp + 40)
			z += w
			mu += w * m
			tau += w * tu
			for j := range y {
				pj, pt := 1/(sigma[j]*sigma[j]), 1/(tu*tu)
				theta[j] += w * (pj*y[j] + pt*m) / (pj + pt)
			}
		}
	}
	floats.Scale(1/z, theta)
	return mu / z, tau / z, theta
}

func TestNUTSEightSchoolsNoncentered(t *testing.T) {
	m, err := EightSchoolsNoncentered("")
	if err != nil {
		t.Fatal(err)
	}
	y := []float64{28, 8, -3, 7, -1, 1, 18, 12}
	sigma := []float64{15, 10, 16, 11, 9, 11, 10, 18}
	mu, tau, theta := eightSchoolsExact(y, sigma)
	cols := sampleNUTS(t, m, 2, 300, 300, 5)
	checkMean(t, "mu", cols["mu"], mu)
	checkMean(t, "tau", cols["tau"], tau)
	checkMean(t, "theta.1", cols["theta.1"], theta[0])
	checkMean(t, "theta.3", cols["theta.3"], theta[2])
}

// blrExact returns the exact posterior means of beta and sigma of the BLR
// model by quadrature over σ: given σ the prior on β is conjugate, so
// y ~ normal(0, σ²I + 100·XXᵀ) and E[β | σ, y] = (XᵀX/σ² + I/100)⁻¹ Xᵀy/σ².
func blrExact(x *mat.Dense, y []float64) (beta []float64, sigma float64) {
	n, d := x.Dims()
	yv := mat.NewVecDense(n, y)
	var xtx mat.SymDense
	xtx.SymOuterK(1, x.T())
	var xty mat.VecDense
	xty.MulVec(x.T(), yv)
	var xxt mat.SymDense
	xxt.SymOuterK(100, x)
	const lo, hi, k = -6.0, 8.0, 1400
	beta = make([]float64, d)
	var z float64
	lps := make([]float64, k)
	means := make([][]float64, k)
	sig := make([]float64, k)
	for i := range lps {
		ls := lo + (float64(i)+0.5)*(hi-lo)/k
		s := math.Exp(ls)
		sig[i] = s
		cov := mat.NewSymDense(n, nil)
		cov.CopySym(&xxt)
		for j := 0; j < n; j++ {
			cov.SetSym(j, j, cov.At(j, j)+s*s)
		}
		var ch mat.Cholesky
		if !ch.Factorize(cov) {
			lps[i] = math.Inf(-1)
			continue
		}
		var sol mat.VecDense
		_ = ch.SolveVecTo(&sol, yv)
		ll := -0.5*mat.Dot(yv, &sol) - 0.5*ch.LogDet() - float64(n)*logSqrt2Pi
		lps[i] = ll + normal(s, 0, 10) + ls
		prec := mat.NewSymDense(d, nil)
		for a := 0; a < d; a++ {
			for b := 0; b <= a; b++ {
				v := xtx.At(a, b) / (s * s)
				if a == b {
					v += 1.0 / 100
				}
				prec.SetSym(a, b, v)
			}
		}
		var pc mat.Cholesky
		pc.Factorize(prec)
		rhs := mat.NewVecDense(d, nil)
		rhs.ScaleVec(1/(s*s), &xty)
		var mean mat.VecDense
		_ = pc.SolveVecTo(&mean, rhs)
		means[i] = mean.RawVector().Data
	}
	top := floats.Max(lps)
	for i, lp := range lps {
		if math.IsInf(lp, -1) {
			continue
		}
		w := math.Exp(lp - top)
		z += w
		sigma += w * sig[i]
		floats.AddScaled(beta, w, means[i])
	}
	floats.Scale(1/z, beta)
	return beta, sigma / z
}

func TestNUTSBLR(t *testing.T) {
	m, err := BLR("")
	if err != nil {
		t.Fatal(err)
	}
	l := load("", "sblrc-blr.json")
	x, y := l.matrix("X", 100, 5), l.vector("y", 100)
	if l.err != nil {
		t.Fatal(l.err)
	}
	beta, sigma := blrExact(x, y)
	cols := sampleNUTS(t, m, 2, 300, 300, 9)
	for j, b := range beta {
		checkMean(t, m.ParamNames()[j], cols[m.ParamNames()[j]], b)
	}
	checkMean(t, "sigma", cols["sigma"], sigma)
}
