package posteriordb

import "github.com/trjgo/trj/ppl"

// Arma11 is posteriordb's arma11: an ARMA(1, 1) model,
//
//	μ ~ normal(0, 10),  φ, θ ~ normal(0, 2),  σ ~ half-Cauchy(0, 2.5),
//	ν₁ = μ + φ·μ,  ε₁ = y₁ − ν₁,
//	ν_t = μ + φ·y_{t−1} + θ·ε_{t−1},  ε_t = y_t − ν_t  (t = 2, …, T),
//	ε_t ~ normal(0, σ).
//
// Parameters mu, phi, theta, sigma. The errors are a recursion through θ,
// unrolled into T scalar steps, so the gradient runs through all of them.
func Arma11(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "arma-arma11.json")
	t := l.integer("T", 1)
	y := l.vector("y", t)
	if l.err != nil {
		return nil, l.err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	mu := b.Real("mu")
	phi := b.Real("phi")
	theta := b.Real("theta")
	sigma := b.Positive("sigma")
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 10.0}, mu)
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 2.0}, phi)
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 2.0}, theta)
	b.Sample(ppl.HalfCauchy{Scale: 2.5}, sigma)

	// The recursion is written with scalar nodes only: slicing a vector
	// node inside it would make each step's gradient a full-length vector.
	e := g.sub(g.c(y[0]), g.add(mu, g.mul(phi, mu)))
	ss := g.square(e)
	for i := 1; i < t; i++ {
		nu := g.add(g.add(mu, g.mul(g.c(y[i-1]), phi)), g.mul(theta, e))
		e = g.sub(g.c(y[i]), nu)
		ss = g.add(ss, g.square(e))
	}
	b.AddLogDensity(g.normalSumSq(ss, sigma, t))
	return b.Model()
}

// Garch11 is posteriordb's garch11: a GARCH(1, 1) volatility model,
//
//	σ₁ = sigma1 (data),
//	σ_t² = α₀ + α₁·(y_{t−1} − μ)² + β₁·σ_{t−1}²  (t = 2, …, T),
//	y_t ~ normal(μ, σ_t),
//
// with μ real, α₀ > 0, α₁ in (0, 1) and β₁ in (0, 1 − α₁), and no prior
// statements: the prior is flat in (μ, α₀) and constant on the triangle
// {α₁, β₁ > 0, α₁ + β₁ < 1} (not β₁ ~ uniform(0, 1 − α₁), which would add
// −log(1 − α₁)). The dependent bound of β₁ contributes
// log(1 − α₁) + log σ(u) + log(1 − σ(u)) to the log-Jacobian.
// Parameters mu, alpha0, alpha1, beta1.
func Garch11(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "garch-garch11.json")
	t := l.integer("T", 1)
	y := l.vector("y", t)
	sigma1 := l.number("sigma1")
	if l.err == nil && !(sigma1 > 0) {
		l.keep(l.d.errorf("sigma1 = %v, want > 0", sigma1))
	}
	if l.err != nil {
		return nil, l.err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	mu := b.Real("mu")
	alpha0 := b.Positive("alpha0")
	alpha1 := b.Interval("alpha1", 0.0, 1.0)
	beta1 := b.Interval("beta1", 0.0, g.sub(g.c(1), alpha1))

	// Scalar nodes only, as in Arma11. d2_t = (y_t − μ)²; Σ_t d2_t/σ_t² and
	// Σ_t log σ_t² accumulate, the first term with the fixed variance σ₁².
	d2 := g.square(g.sub(g.c(y[0]), mu))
	v := g.c(sigma1 * sigma1)
	quad := g.mul(g.c(1/(sigma1*sigma1)), d2)
	logVar := g.c(0)
	for i := 1; i < t; i++ {
		v = g.add(g.add(alpha0, g.mul(alpha1, d2)), g.mul(beta1, v))
		d2 = g.square(g.sub(g.c(y[i]), mu))
		quad = g.add(quad, g.div(d2, v))
		logVar = g.add(logVar, g.log(v))
	}
	// log-likelihood: −½Σ d2/σ² − ½Σ log σ² − T log √(2π) − log σ₁.
	ll := g.neg(g.add(g.mul(g.c(0.5), g.add(quad, logVar)), g.c(float64(t)*logSqrt2Pi+logOf(sigma1))))
	b.AddLogDensity(ll)
	return b.Model()
}
