package kernels

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// gaussian is a hand-written N(mean, cov) target, stored by its precision;
// it does not allocate.
type gaussian struct {
	mean, prec, diff []float64
	n                int
}

func newGaussian(t testing.TB, mean []float64, cov mat.Symmetric) *gaussian {
	n := len(mean)
	var c mat.Cholesky
	if !c.Factorize(cov) {
		t.Fatal("covariance not positive definite")
	}
	var p mat.SymDense
	if err := c.InverseTo(&p); err != nil {
		t.Fatal(err)
	}
	g := &gaussian{mean: mean, prec: make([]float64, n*n), diff: make([]float64, n), n: n}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.prec[i*n+j] = p.At(i, j)
		}
	}
	return g
}

func (g *gaussian) Dim() int { return g.n }

func (g *gaussian) LogDensityGrad(x, grad []float64) (float64, error) {
	if len(x) != g.n || len(grad) != g.n {
		return 0, ErrDimension
	}
	for i := range x {
		g.diff[i] = x[i] - g.mean[i]
	}
	lp := 0.0
	for i := 0; i < g.n; i++ {
		s := 0.0
		row := g.prec[i*g.n : (i+1)*g.n]
		for j, d := range g.diff {
			s += row[j] * d
		}
		grad[i] = -s
		lp -= 0.5 * g.diff[i] * s
	}
	return lp, nil
}

func (g *gaussian) clone() *gaussian {
	return &gaussian{mean: g.mean, prec: g.prec, diff: make([]float64, g.n), n: g.n}
}

func diagCov(sds []float64) *mat.SymDense {
	c := mat.NewSymDense(len(sds), nil)
	for i, s := range sds {
		c.SetSym(i, i, s*s)
	}
	return c
}

// funnel is Neal's funnel in d dimensions: v ~ N(0, 3²), x_i ~ N(0, e^v).
type funnel struct{ n int }

func (f funnel) Dim() int { return f.n }

func (f funnel) LogDensityGrad(x, grad []float64) (float64, error) {
	v := x[0]
	lp := -v * v / 18
	grad[0] = -v / 9
	ev := math.Exp(-v)
	for i := 1; i < f.n; i++ {
		lp += -0.5*x[i]*x[i]*ev - 0.5*v
		grad[0] += 0.5*x[i]*x[i]*ev - 0.5
		grad[i] = -x[i] * ev
	}
	return lp, nil
}

// failing is a standard normal restricted to x[0] < 1; outside it returns
// an error, or NaN without one when nan is set.
type failing struct {
	n   int
	nan bool
}

func (f failing) Dim() int { return f.n }

func (f failing) LogDensityGrad(x, grad []float64) (float64, error) {
	if x[0] > 1 {
		if f.nan {
			for i := range grad {
				grad[i] = math.NaN()
			}
			return math.NaN(), nil
		}
		return 0, errors.New("outside support")
	}
	lp := 0.0
	for i, v := range x {
		lp -= 0.5 * v * v
		grad[i] = -v
	}
	return lp, nil
}

// essOne is the effective sample size of one chain by Geyer's initial
// monotone sequence estimator on the autocorrelations.
func essOne(x []float64) float64 {
	n := len(x)
	mean := 0.0
	for _, v := range x {
		mean += v
	}
	mean /= float64(n)
	acov := func(lag int) float64 {
		s := 0.0
		for i := 0; i+lag < n; i++ {
			s += (x[i] - mean) * (x[i+lag] - mean)
		}
		return s / float64(n)
	}
	c0 := acov(0)
	if c0 == 0 {
		return float64(n)
	}
	tau := -1.0
	prev := math.Inf(1)
	for k := 0; 2*k+1 < n; k++ {
		pair := (acov(2*k) + acov(2*k+1)) / c0
		if pair <= 0 {
			break
		}
		pair = math.Min(pair, prev)
		prev = pair
		tau += 2 * pair
	}
	return float64(n) / math.Max(tau, 1.0/math.Log10(float64(n)))
}

// moments holds the pooled mean and variance of a scalar over chains and
// their Monte Carlo standard errors.
type moments struct {
	mean, mcseMean, vari, mcseVar, ess float64
}

// pooledMoments computes mean and variance of coordinate j of the chains,
// with MCSEs from the summed per-chain ESS of x and of (x − truthMean)².
func pooledMoments(chains [][]float64, dim, j int, truthMean float64) moments {
	var all, sq []float64
	essX, essSq := 0.0, 0.0
	for _, c := range chains {
		m := len(c) / dim
		xs := make([]float64, m)
		ss := make([]float64, m)
		for i := 0; i < m; i++ {
			xs[i] = c[i*dim+j]
			ss[i] = (xs[i] - truthMean) * (xs[i] - truthMean)
		}
		essX += essOne(xs)
		essSq += essOne(ss)
		all = append(all, xs...)
		sq = append(sq, ss...)
	}
	mv := func(a []float64) (float64, float64) {
		m := 0.0
		for _, v := range a {
			m += v
		}
		m /= float64(len(a))
		v := 0.0
		for _, x := range a {
			v += (x - m) * (x - m)
		}
		return m, v / float64(len(a)-1)
	}
	mean, vari := mv(all)
	msq, vsq := mv(sq)
	return moments{
		mean: mean, mcseMean: math.Sqrt(vari / essX),
		vari: msq, mcseVar: math.Sqrt(vsq / essSq), ess: essX,
	}
}

// checkGaussian asserts every coordinate's mean and variance (about the
// true mean) agree with the truth within 4 Monte Carlo standard errors.
func checkGaussian(t *testing.T, name string, chains [][]float64, mean, vari []float64) {
	t.Helper()
	for j := range mean {
		m := pooledMoments(chains, len(mean), j, mean[j])
		if d := math.Abs(m.mean - mean[j]); !(d < 4*m.mcseMean) {
			t.Errorf("%s: coordinate %d: mean %.5g, want %.5g (|diff| %.3g, 4·MCSE %.3g, ESS %.0f)", name, j, m.mean, mean[j], d, 4*m.mcseMean, m.ess)
		}
		if d := math.Abs(m.vari - vari[j]); !(d < 4*m.mcseVar) {
			t.Errorf("%s: coordinate %d: variance %.5g, want %.5g (|diff| %.3g, 4·MCSE %.3g)", name, j, m.vari, vari[j], d, 4*m.mcseVar)
		}
	}
}

func chainDraws(r *SampleResult) [][]float64 {
	out := make([][]float64, len(r.Chains))
	for i := range r.Chains {
		out[i] = r.Chains[i].Draws
	}
	return out
}

var runtimeGOMAXPROCS = runtime.GOMAXPROCS

// conjugate is y_i ~ N(μ, σ²), i = 1..n, with prior μ ~ N(m0, s0²): the
// posterior and the evidence are known in closed form.
type conjugate struct {
	y             []float64
	sigma, m0, s0 float64
}

func newConjugate() *conjugate {
	rng := rand.New(rand.NewPCG(99, 0))
	y := make([]float64, 20)
	for i := range y {
		y[i] = 1.5 + 2*rng.NormFloat64()
	}
	return &conjugate{y: y, sigma: 2, m0: 0, s0: 3}
}

func (c *conjugate) Dim() int { return 1 }

func (c *conjugate) logPrior(mu float64) (float64, float64) {
	d := mu - c.m0
	return -0.5*d*d/(c.s0*c.s0) - math.Log(c.s0) - 0.5*math.Log(2*math.Pi), -d / (c.s0 * c.s0)
}

func (c *conjugate) logLik(mu float64) (float64, float64) {
	lp, g := 0.0, 0.0
	for _, y := range c.y {
		d := y - mu
		lp += -0.5*d*d/(c.sigma*c.sigma) - math.Log(c.sigma) - 0.5*math.Log(2*math.Pi)
		g += d / (c.sigma * c.sigma)
	}
	return lp, g
}

func (c *conjugate) LogDensityGrad(x, grad []float64) (float64, error) {
	if len(x) != 1 {
		return 0, ErrDimension
	}
	a, ga := c.logPrior(x[0])
	b, gb := c.logLik(x[0])
	grad[0] = ga + gb
	return a + b, nil
}

func (c *conjugate) posterior() (mean, vari float64) {
	n := float64(len(c.y))
	sum := 0.0
	for _, y := range c.y {
		sum += y
	}
	prec := 1/(c.s0*c.s0) + n/(c.sigma*c.sigma)
	return (c.m0/(c.s0*c.s0) + sum/(c.sigma*c.sigma)) / prec, 1 / prec
}

// logEvidence is log N(y; m0·1, σ²I + s0²·11ᵀ).
func (c *conjugate) logEvidence() float64 {
	n := len(c.y)
	cov := mat.NewSymDense(n, nil)
	mu := make([]float64, n)
	for i := 0; i < n; i++ {
		mu[i] = c.m0
		for j := i; j < n; j++ {
			v := c.s0 * c.s0
			if i == j {
				v += c.sigma * c.sigma
			}
			cov.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		panic("evidence covariance not positive definite")
	}
	d := mat.NewVecDense(n, nil)
	for i := range mu {
		d.SetVec(i, c.y[i]-mu[i])
	}
	var sol mat.VecDense
	if err := ch.SolveVecTo(&sol, d); err != nil {
		panic(err)
	}
	return -0.5 * (float64(n)*math.Log(2*math.Pi) + ch.LogDet() + mat.Dot(d, &sol))
}

// logGamma is x_i = log θ_i with θ_i ~ Gamma(α_i, 1) independently: a
// skewed target whose moments are known, E[x] = ψ(α), Var[x] = ψ'(α).
type logGamma struct{ alpha []float64 }

func (l logGamma) Dim() int { return len(l.alpha) }

func (l logGamma) LogDensityGrad(x, grad []float64) (float64, error) {
	lp := 0.0
	for i, a := range l.alpha {
		e := math.Exp(x[i])
		lp += a*x[i] - e
		grad[i] = a - e
	}
	return lp, nil
}

// logGammaMoments returns ψ(α) and ψ'(α) for α = 1/2 or a positive
// integer, from their closed forms.
func logGammaMoments(alpha []float64) (mean, vari []float64) {
	const eulerGamma = 0.57721566490153286061
	for _, a := range alpha {
		var m, v float64
		if a == 0.5 {
			m, v = -eulerGamma-2*math.Ln2, math.Pi*math.Pi/2
		} else {
			m, v = -eulerGamma, math.Pi*math.Pi/6
			for k := 1; k < int(a); k++ {
				m += 1 / float64(k)
				v -= 1 / float64(k*k)
			}
		}
		mean = append(mean, m)
		vari = append(vari, v)
	}
	return mean, vari
}
