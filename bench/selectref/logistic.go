package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// LogitPrior is the prior of the logistic family: intercept ~ N(M0, S0²),
// every other coefficient (on the standardised predictors) ~ N(0, S²).
type LogitPrior struct {
	S0, S, M0 float64
}

// isSettings are the importance-sampling settings of the logistic
// reference: Draws per model from a multivariate t with Nu degrees of
// freedom centred at the posterior mode with the inverse Hessian as scale.
type isSettings struct {
	Draws int     `json:"draws_per_model"`
	Nu    float64 `json:"t_degrees_of_freedom"`
	Seed  uint64  `json:"seed"`
}

// logitModel is one model's data: its columns of the design copied row-major.
type logitModel struct {
	n, d int
	x    []float64 // n × d
	y    []float64
	prec []float64 // prior precision of each coefficient
	m0   float64   // prior mean of the first (the intercept)
}

func (m *logitModel) logPost(beta, eta []float64) float64 {
	var lp float64
	for i := range m.n {
		row := m.x[i*m.d : (i+1)*m.d]
		e := 0.0
		for j, b := range beta {
			e += row[j] * b
		}
		eta[i] = e
		// y e − log(1+eᵉ), stably.
		if e > 0 {
			lp += m.y[i]*e - e - math.Log1p(math.Exp(-e))
		} else {
			lp += m.y[i]*e - math.Log1p(math.Exp(e))
		}
	}
	for j, b := range beta {
		if j == 0 {
			b -= m.m0
		}
		lp -= 0.5 * m.prec[j] * b * b
	}
	return lp
}

// mode finds the posterior mode by Newton's method and returns it with the
// Cholesky factor L (lower, row-major d×d) of the negative Hessian there.
func (m *logitModel) mode() (mu, l []float64, err error) {
	d := m.d
	mu = make([]float64, d)
	eta := make([]float64, m.n)
	h := make([]float64, d*d)
	gr := make([]float64, d)
	for range 100 {
		m.negHessian(mu, eta, h, gr)
		l = append(l[:0], h...)
		if !cholFlat(l, d) {
			return nil, nil, fmt.Errorf("logistic: Hessian not positive definite")
		}
		step := cholSolveFlat(l, d, gr)
		var sz float64
		for j := range d {
			mu[j] += step[j]
			sz = math.Max(sz, math.Abs(step[j]))
		}
		if sz < 1e-10 {
			// Factor the Hessian at the final mode.
			m.negHessian(mu, eta, h, nil)
			l = append(l[:0], h...)
			cholFlat(l, d)
			return mu, l, nil
		}
	}
	return nil, nil, fmt.Errorf("logistic: Newton did not converge")
}

// negHessian writes the lower triangle of the negative Hessian of the log
// posterior at mu into h (row-major d×d) and, unless gr is nil, its
// gradient into gr; eta is scratch for the linear predictor.
func (m *logitModel) negHessian(mu, eta, h, gr []float64) {
	d := m.d
	m.logPost(mu, eta)
	for k := range h {
		h[k] = 0
	}
	for j := range d {
		if gr != nil {
			gr[j] = -m.prec[j] * mu[j]
			if j == 0 {
				gr[j] += m.prec[j] * m.m0
			}
		}
		h[j*d+j] = m.prec[j]
	}
	for i := range m.n {
		pi := 1 / (1 + math.Exp(-eta[i]))
		w := pi * (1 - pi)
		row := m.x[i*d : (i+1)*d]
		for a := range d {
			if gr != nil {
				gr[a] += row[a] * (m.y[i] - pi)
			}
			for b := 0; b <= a; b++ {
				h[a*d+b] += w * row[a] * row[b]
			}
		}
	}
}

// cholFlat factors the row-major d×d a (lower triangle) in place.
func cholFlat(a []float64, d int) bool {
	for j := range d {
		s := a[j*d+j]
		for k := range j {
			s -= a[j*d+k] * a[j*d+k]
		}
		if s <= 0 {
			return false
		}
		ljj := math.Sqrt(s)
		a[j*d+j] = ljj
		for i := j + 1; i < d; i++ {
			s := a[i*d+j]
			for k := range j {
				s -= a[i*d+k] * a[j*d+k]
			}
			a[i*d+j] = s / ljj
		}
		for i := 0; i < j; i++ {
			a[i*d+j] = 0
		}
	}
	return true
}

// cholSolveFlat solves L Lᵀ x = v.
func cholSolveFlat(l []float64, d int, v []float64) []float64 {
	c := make([]float64, d)
	for i := range d {
		s := v[i]
		for k := range i {
			s -= l[i*d+k] * c[k]
		}
		c[i] = s / l[i*d+i]
	}
	for i := d - 1; i >= 0; i-- {
		s := c[i]
		for k := i + 1; k < d; k++ {
			s -= l[k*d+i] * c[k]
		}
		c[i] = s / l[i*d+i]
	}
	return c
}

// isEstimate is the importance-sampling estimate of one model's log
// evidence and the relative standard error of the evidence.
type isEstimate struct {
	logZ, relSE, laplace float64
	sampled              bool // by importance sampling, not Laplace only
	// mean and m2 are the self-normalised importance estimates of the
	// posterior mean and second moment of each coefficient given the
	// model (nil for Laplace only).
	mean, m2 []float64
}

// logEvidenceIS estimates log p(y | γ) by importance sampling from the
// multivariate t centred at the mode with scale (−Hessian)⁻¹.
func (m *logitModel) logEvidenceIS(s isSettings, r *rand.Rand) (isEstimate, error) {
	mu, l, err := m.mode()
	if err != nil {
		return isEstimate{}, err
	}
	d := m.d
	eta := make([]float64, m.n)
	var halfLogDetP float64 // ½ log|−H|
	for j := range d {
		halfLogDetP += math.Log(l[j*d+j])
	}
	lmode := m.logPost(mu, eta)
	// Prior normalising constant Σ −½ log(2π/prec).
	var lnorm float64
	for _, pr := range m.prec {
		lnorm += 0.5 * math.Log(pr/(2*math.Pi))
	}
	laplace := lmode + lnorm + float64(d)/2*math.Log(2*math.Pi) - halfLogDetP
	if s.Draws == 0 {
		// Laplace approximation only (for quick looks, not a reference).
		return isEstimate{logZ: laplace, laplace: laplace}, nil
	}
	nu := s.Nu
	lg1, _ := math.Lgamma((nu + float64(d)) / 2)
	lg2, _ := math.Lgamma(nu / 2)
	// log t density normaliser in terms of z = Lᵀ(θ−μ): the Jacobian adds +log|L|.
	lqConst := lg1 - lg2 - float64(d)/2*math.Log(nu*math.Pi) + halfLogDetP
	z := make([]float64, d)
	theta := make([]float64, d)
	lw := make([]float64, s.Draws)
	thetas := make([]float64, s.Draws*d)
	for k := range s.Draws {
		var zz float64
		for j := range z {
			z[j] = r.NormFloat64()
			zz += z[j] * z[j]
		}
		var chi float64
		for range int(nu) {
			e := r.NormFloat64()
			chi += e * e
		}
		scale := math.Sqrt(nu / chi)
		for j := range z {
			z[j] *= scale
		}
		zz *= scale * scale
		// θ = μ + L⁻ᵀ z (back substitution with Lᵀ).
		for i := d - 1; i >= 0; i-- {
			v := z[i]
			for q := i + 1; q < d; q++ {
				v -= l[q*d+i] * theta[q]
			}
			theta[i] = v / l[i*d+i]
		}
		for j := range theta {
			theta[j] += mu[j]
		}
		lq := lqConst - (nu+float64(d))/2*math.Log1p(zz/nu)
		lw[k] = m.logPost(theta, eta) + lnorm - lq
		copy(thetas[k*d:], theta)
	}
	mx := math.Inf(-1)
	for _, v := range lw {
		mx = math.Max(mx, v)
	}
	var s1, s2 float64
	mean, m2 := make([]float64, d), make([]float64, d)
	for k, v := range lw {
		w := math.Exp(v - mx)
		s1 += w
		s2 += w * w
		for j, t := range thetas[k*d : (k+1)*d] {
			mean[j] += w * t
			m2[j] += w * t * t
		}
	}
	for j := range mean {
		mean[j] /= s1
		m2[j] /= s1
	}
	nn := float64(s.Draws)
	mw := s1 / nn
	varw := s2/nn - mw*mw
	rel := math.Sqrt(math.Max(varw, 0)/nn) / mw
	return isEstimate{logZ: mx + math.Log(s1/nn), relSE: rel, laplace: laplace, sampled: true, mean: mean, m2: m2}, nil
}

// logisticEnumeration estimates every model's evidence and combines them
// into PIPs with standard errors (delta method over the independent
// per-model estimates).
type logisticResult struct {
	PIP           []float64  `json:"pip"`
	PIPSE         []float64  `json:"pip_se"`
	ExpectedSize  float64    `json:"expected_size"`
	Top           []topModel `json:"top_models"`
	MaxRelSE      float64    `json:"max_relative_se_evidence"`
	MaxRelSEMass  float64    `json:"max_relative_se_evidence_of_models_with_prob_over_1e-4"`
	MaxLaplaceGap float64    `json:"max_abs_log_laplace_minus_is_over_1e-4"`
	// Sampled is the number of models importance sampled; the others
	// (Laplace probability ≤ isThreshold each) keep their Laplace
	// evidence, RestLaplaceMass in all.
	Sampled         int     `json:"models_importance_sampled"`
	RestLaplaceMass float64 `json:"laplace_probability_of_the_models_not_sampled"`
}

func logisticEnumerate(ds design, pr LogitPrior, s isSettings, workers int) (*logisticResult, error) {
	p := ds.p
	nm := 1 << p
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Pass 1: every model's Laplace evidence. Pass 2: importance sampling
	// of the models whose Laplace posterior probability exceeds
	// isThreshold; the rest keep their Laplace evidence, and their total
	// probability (reported) bounds what that can change.
	lap, err := forModels(ds, pr, isSettings{Draws: 0, Nu: s.Nu, Seed: s.Seed}, workers, nil)
	if err != nil {
		return nil, err
	}
	lp := make([]float64, nm)
	for mask := range nm {
		lp[mask] = lap[mask].logZ + logBetaBinomial11(p, popcount(mask))
	}
	mx := floatsMax(lp)
	var tot float64
	for _, v := range lp {
		tot += math.Exp(v - mx)
	}
	var sample []int
	var restMass float64
	for mask := range nm {
		q := math.Exp(lp[mask]-mx) / tot
		if q > isThreshold {
			sample = append(sample, mask)
		} else {
			restMass += q
		}
	}
	est, err := forModels(ds, pr, s, workers, sample)
	if err != nil {
		return nil, err
	}
	for mask := range nm {
		if !est[mask].sampled {
			est[mask] = lap[mask]
		}
	}
	res, err := combine(p, est)
	if err != nil {
		return nil, err
	}
	res.Sampled, res.RestLaplaceMass = len(sample), restMass
	return res, nil
}

// isThreshold is the Laplace posterior probability above which a model's
// evidence is importance sampled.
const isThreshold = 1e-7

func floatsMax(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// forModels estimates the evidence of the models masks (all when nil).
func forModels(ds design, pr LogitPrior, s isSettings, workers int, masks []int) ([]isEstimate, error) {
	p := ds.p
	nm := 1 << p
	if masks == nil {
		masks = make([]int, nm)
		for i := range masks {
			masks[i] = i
		}
	}
	est := make([]isEstimate, nm)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < len(masks); k += workers {
				mask := masks[k]
				cols := []int{0}
				for j := range p {
					if mask>>j&1 == 1 {
						cols = append(cols, j+1)
					}
				}
				m := &logitModel{n: ds.n, d: len(cols), y: ds.y, x: make([]float64, ds.n*len(cols)), prec: make([]float64, len(cols))}
				for i := range ds.n {
					for c, col := range cols {
						m.x[i*m.d+c] = ds.x[i][col]
					}
				}
				m.prec[0] = 1 / (pr.S0 * pr.S0)
				m.m0 = pr.M0
				for c := 1; c < m.d; c++ {
					m.prec[c] = 1 / (pr.S * pr.S)
				}
				r := rand.New(rand.NewPCG(s.Seed, uint64(mask)))
				e, err := m.logEvidenceIS(s, r)
				if err != nil {
					errs[w] = fmt.Errorf("model %s: %w", terms(uint64(mask), p), err)
					return
				}
				est[mask] = e
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return est, nil
}

// combine turns per-model evidence estimates into PIPs with delta-method
// standard errors, the expected size and the top models.
func combine(p int, est []isEstimate) (*logisticResult, error) {
	nm := 1 << p
	logw := make([]float64, nm)
	mx := math.Inf(-1)
	for mask := range nm {
		logw[mask] = est[mask].logZ + logBetaBinomial11(p, popcount(mask))
		mx = math.Max(mx, logw[mask])
	}
	w := make([]float64, nm)
	var tot float64
	for mask := range nm {
		w[mask] = math.Exp(logw[mask] - mx)
		tot += w[mask]
	}
	res := &logisticResult{PIP: make([]float64, p), PIPSE: make([]float64, p)}
	for mask := range nm {
		w[mask] /= tot
		for j := range p {
			if mask>>j&1 == 1 {
				res.PIP[j] += w[mask]
			}
		}
		res.ExpectedSize += float64(popcount(mask)) * w[mask]
		res.MaxRelSE = math.Max(res.MaxRelSE, est[mask].relSE)
		if w[mask] > 1e-4 {
			res.MaxRelSEMass = math.Max(res.MaxRelSEMass, est[mask].relSE)
			res.MaxLaplaceGap = math.Max(res.MaxLaplaceGap, math.Abs(est[mask].laplace-est[mask].logZ))
		}
	}
	for j := range p {
		var v float64
		for mask := range nm {
			in := 0.0
			if mask>>j&1 == 1 {
				in = 1
			}
			t := (in - res.PIP[j]) * w[mask] * est[mask].relSE
			v += t * t
		}
		res.PIPSE[j] = math.Sqrt(v)
	}
	idx := topIndices(logw, 10)
	for _, m := range idx {
		res.Top = append(res.Top, topModel{Terms: terms(uint64(m), p), Size: popcount(m), Prob: w[m]})
	}
	return res, nil
}
