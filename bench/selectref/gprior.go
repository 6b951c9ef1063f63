package main

import (
	"fmt"
	"math"
)

// The g-prior posterior of one model, as BMS states it (g = "UIP",
// mprior = "random"): y = α + Xc_γ β_γ + ε with Xc the centred predictors in
// data units, flat p(α), p(σ²) ∝ 1/σ² and β_γ | σ² ~ N(0, g σ² (Xc_γᵀXc_γ)⁻¹).
// With s = g/(1+g), β̂ the least-squares fit on the centred data, R² its
// coefficient of determination and S = Σ(y−ȳ)²:
//
//	β_γ | σ², y ~ N(s β̂, s σ² (Xc_γᵀXc_γ)⁻¹),
//	σ² | y ~ InverseGamma((n−1)/2, Q/2),  Q = S (1 − s R²),
//
// so β_γ | y is a multivariate t with n−1 degrees of freedom, location s β̂
// and scale s Q/(n−1) (Xc_γᵀXc_γ)⁻¹; its covariance is
// s Q/(n−3) (Xc_γᵀXc_γ)⁻¹. The evidence is the one of gPriorLogEvidence.

// gFit holds the scratch of the per-model g-prior computations of a gram
// with p predictors (indices 1..p of the gram; 0, the intercept, unused).
type gFit struct {
	gc   gram
	n    int
	g, s float64
	l    []float64 // k×k lower Cholesky factor, row-major, stride p
	c    []float64 // L⁻¹ Xc_γᵀ y
	p    int
}

func newGFit(gc gram, n int, g float64) *gFit {
	p := len(gc.xty) - 1
	return &gFit{gc: gc, n: n, g: g, s: g / (1 + g), l: make([]float64, p*p), c: make([]float64, p), p: p}
}

// chol factors Xc_γᵀXc_γ of the gram columns cols (1-based) into f.l and
// computes f.c = L⁻¹ Xc_γᵀ y. It returns false if the columns are
// collinear.
func (f *gFit) chol(cols []int) bool {
	p, l := f.p, f.l
	for i, ci := range cols {
		row := f.gc.g[ci]
		for j := 0; j <= i; j++ {
			s := row[cols[j]]
			for q := range j {
				s -= l[i*p+q] * l[j*p+q]
			}
			if j == i {
				if s <= 1e-12*row[ci] {
					return false
				}
				l[i*p+i] = math.Sqrt(s)
			} else {
				l[i*p+j] = s / l[j*p+j]
			}
		}
		s := f.gc.xty[ci]
		for q := range i {
			s -= l[i*p+q] * f.c[q]
		}
		f.c[i] = s / l[i*p+i]
	}
	return true
}

// logEv is the log evidence (up to the constant of gPriorLogEvidence) of the
// model made of the first k columns last factored, from its R² = |c₁..ₖ|²/S.
func (f *gFit) logEv(k int) (logEv, r2 float64) {
	var q float64
	for i := range k {
		q += f.c[i] * f.c[i]
	}
	r2 = q / f.gc.yty
	nn := float64(f.n)
	return (nn-1-float64(k))/2*math.Log1p(f.g) - (nn-1)/2*math.Log1p(f.g*(1-r2)), r2
}

// coefVar is the posterior variance factor s Q/(n−3) of a model with R² r2.
func (f *gFit) coefVar(r2 float64) float64 {
	return f.s * f.gc.yty * (1 - f.s*r2) / float64(f.n-3)
}

// model returns the log evidence of the model cols and its coefficients'
// posterior means and variances (in the order of cols) written into mean
// and variance.
func (f *gFit) model(cols []int, mean, variance []float64) (float64, error) {
	k := len(cols)
	if k == 0 {
		lz, _ := f.logEv(0)
		return lz, nil
	}
	if !f.chol(cols) {
		return 0, fmt.Errorf("g-prior: predictors %v are collinear", cols)
	}
	lz, r2 := f.logEv(k)
	p, l := f.p, f.l
	// β̂ = L⁻ᵀ c by back substitution.
	for i := k - 1; i >= 0; i-- {
		s := f.c[i]
		for q := i + 1; q < k; q++ {
			s -= l[q*p+i] * mean[q]
		}
		mean[i] = s / l[i*p+i]
	}
	// diag((LLᵀ)⁻¹)_j = Σ_i (L⁻¹)_ij²: column j of L⁻¹ by forward substitution.
	v := f.coefVar(r2)
	col := make([]float64, k)
	for j := range k {
		var d float64
		for i := j; i < k; i++ {
			s := 0.0
			if i == j {
				s = 1
			}
			for q := j; q < i; q++ {
				s -= l[i*p+q] * col[q]
			}
			col[i] = s / l[i*p+i]
			d += col[i] * col[i]
		}
		variance[j] = v * d
	}
	for i := range k {
		mean[i] *= f.s
	}
	return lz, nil
}

// coefMoments accumulates model-averaged first and second moments of the
// coefficients (zero in the models that exclude them).
type coefMoments struct {
	pip, m1, m2 []float64
	size, total float64
}

func newCoefMoments(p int) *coefMoments {
	return &coefMoments{pip: make([]float64, p), m1: make([]float64, p), m2: make([]float64, p)}
}

// add adds the model cols (1-based) with weight w, coefficient means and
// variances.
func (c *coefMoments) add(w float64, cols []int, mean, variance []float64) {
	c.total += w
	c.size += w * float64(len(cols))
	for i, j := range cols {
		c.pip[j-1] += w
		c.m1[j-1] += w * mean[i]
		c.m2[j-1] += w * (variance[i] + mean[i]*mean[i])
	}
}

// summary returns PIPs, posterior means and standard deviations.
func (c *coefMoments) summary() (pip, mean, sd []float64, size float64) {
	p := len(c.pip)
	pip, mean, sd = make([]float64, p), make([]float64, p), make([]float64, p)
	for j := range p {
		pip[j] = c.pip[j] / c.total
		mean[j] = c.m1[j] / c.total
		sd[j] = math.Sqrt(math.Max(c.m2[j]/c.total-mean[j]*mean[j], 0))
	}
	return pip, mean, sd, c.size / c.total
}

// gPriorExact enumerates the 2^p models of d under the g-prior (g = n) and
// the beta-binomial(1,1) model prior: PIPs, model-averaged coefficient
// means and standard deviations in data units, the top models.
func gPriorExact(d dataset) (*coefMoments, *enumeration, error) {
	n, p := len(d.y), len(d.x[0])
	if p > 20 {
		return nil, nil, fmt.Errorf("g-prior enumeration: p = %d too large", p)
	}
	f := newGFit(centredGram(d), n, float64(n))
	nm := 1 << p
	logw := make([]float64, nm)
	type fit struct{ mean, variance []float64 }
	fits := make([]fit, nm)
	cols := make([]int, 0, p)
	for m := range nm {
		cols = cols[:0]
		for j := range p {
			if m>>j&1 == 1 {
				cols = append(cols, j+1)
			}
		}
		mean, variance := make([]float64, len(cols)), make([]float64, len(cols))
		lz, err := f.model(cols, mean, variance)
		if err != nil {
			return nil, nil, err
		}
		logw[m] = lz + logBetaBinomial11(p, len(cols))
		fits[m] = fit{mean, variance}
	}
	mx := floatsMax(logw)
	cm := newCoefMoments(p)
	var tot float64
	for m := range nm {
		tot += math.Exp(logw[m] - mx)
	}
	e := &enumeration{logw: logw, LogZ: mx + math.Log(tot)}
	for m := range nm {
		cols = cols[:0]
		for j := range p {
			if m>>j&1 == 1 {
				cols = append(cols, j+1)
			}
		}
		cm.add(math.Exp(logw[m]-e.LogZ), cols, fits[m].mean, fits[m].variance)
	}
	for _, m := range topIndices(logw, 20) {
		e.Top = append(e.Top, topModel{Terms: terms(uint64(m), p), Size: popcount(m), Prob: math.Exp(logw[m] - e.LogZ)})
	}
	return cm, e, nil
}
