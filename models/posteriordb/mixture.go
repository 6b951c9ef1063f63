package posteriordb

import (
	"github.com/trjgo/trj/ppl"
)

// LowDimGaussMix is posteriordb's low_dim_gauss_mix: a two-component
// normal mixture,
//
//	σ_k ~ half-normal(0, 2),  μ ~ normal(0, 2) with μ₁ < μ₂,  θ ~ beta(5, 5),
//	y_n ~ θ·normal(μ₁, σ₁) + (1 − θ)·normal(μ₂, σ₂),
//
// the mixture evaluated as Stan's log_mix, a log-sum-exp of the two
// weighted component densities. The ordering of μ identifies the
// components. Parameters mu (2, ordered), sigma (2), theta.
func LowDimGaussMix(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "low_dim_gauss_mix-low_dim_gauss_mix.json")
	n := l.integer("N", 1)
	y := l.vector("y", n)
	if l.err != nil {
		return nil, l.err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	mu := b.Ordered("mu", 2)
	sigma := b.Positive("sigma", 2)
	theta := b.Interval("theta", 0.0, 1.0)
	b.Sample(ppl.HalfNormal{Sigma: 2.0}, sigma)
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 2.0}, mu)
	b.Sample(ppl.Beta{Alpha: 5.0, Beta: 5.0}, theta)

	yd := b.Data("y", y)
	lp1 := b.Check(ppl.Normal{Mu: g.at(mu, 0), Sigma: g.at(sigma, 0)}.LogProbs(yd))
	lp2 := b.Check(ppl.Normal{Mu: g.at(mu, 1), Sigma: g.at(sigma, 1)}.LogProbs(yd))
	b.AddLogDensity(g.logAddExp(g.add(lp1, g.log(theta)), g.add(lp2, g.log1m(theta))))
	return b.Model()
}

// HMMExample is posteriordb's hmm_example: a two-state hidden Markov model
// with unit-variance normal emissions,
//
//	θ₁, θ₂ ~ uniform on the 2-simplex (rows of the transition matrix),
//	μ positive-ordered,  μ₁ ~ normal(3, 1),  μ₂ ~ normal(10, 1),
//	γ₁(k) = normal_lpdf(y₁ | μ_k, 1),
//	γ_t(k) = log Σ_j exp(γ_{t−1}(j) + log θ_j[k]) + normal_lpdf(y_t | μ_k, 1),
//	target += log Σ_k exp γ_N(k),
//
// the forward algorithm, here ppl.HMM (one ops.HMMMarginal: the N × 2
// matrix of emission log-densities and the log transition matrix in, the
// log-likelihood and its forward–backward gradient out). As in the Stan
// program there is no initial-state distribution. Parameters theta1,
// theta2 (simplexes: theta1.2 = 1 − theta1.1, so four free dimensions),
// mu. The Viterbi generated quantities are not computed.
func HMMExample(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "hmm_example-hmm_example.json")
	n := l.integer("N", 1)
	k := l.integer("K", 1)
	y := l.vector("y", n)
	if l.err == nil && k != 2 {
		l.keep(l.d.errorf("K = %d: this model is written for K = 2 states", k))
	}
	if l.err != nil {
		return nil, l.err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	theta1, theta2 := b.Simplex("theta1", 2), b.Simplex("theta2", 2)
	mu := b.PositiveOrdered("mu", 2)
	b.Sample(ppl.Normal{Mu: []float64{3, 10}, Sigma: 1.0}, mu)
	b.Sample(ppl.HMM{
		Emissions:   []ppl.Distribution{ppl.Normal{Mu: g.at(mu, 0), Sigma: 1.0}, ppl.Normal{Mu: g.at(mu, 1), Sigma: 1.0}},
		Transitions: []ppl.Operand{theta1, theta2},
	}, b.Data("y", y))
	return b.Model()
}
