package ppl

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// logisticRef is the logistic log-density written symmetric in z, finite
// in both tails.
func logisticRef(mu, s float64) lpdf {
	return lpdfFunc(func(x float64) float64 {
		z := math.Abs(x-mu) / s
		return -z - math.Log(s) - 2*math.Log1p(math.Exp(-z))
	})
}

func TestContinuousDistributions(t *testing.T) {
	pos := []float64{0.3, 1.2, 2.5, 1e-12, 40}
	reals := []float64{-1.3, 0.2, 2.5, 7, -600}
	angles := []float64{-3, 0.2, 0.41, 3.1, 9}
	cases := []distCase{
		{"Weibull/node-params", func(b *Builder) {
			b.Sample(Weibull{Alpha: b.Real("a"), Sigma: b.Real("s")}, b.Data("x", pos))
		}, []float64{1.7, 2.2}, sumLogProb(pos, func(int) lpdf { return distuv.Weibull{K: 1.7, Lambda: 2.2} })},
		{"Weibull/below-one-shape", func(b *Builder) {
			b.Sample(Weibull{Alpha: 0.4, Sigma: b.Real("s")}, b.Data("x", pos))
		}, []float64{0.9}, sumLogProb(pos, func(int) lpdf { return distuv.Weibull{K: 0.4, Lambda: 0.9} })},
		{"Weibull/node-x", func(b *Builder) {
			b.Sample(Weibull{Alpha: 3.0, Sigma: 1.5}, b.Positive("x", 2))
		}, []float64{-20, 1}, -19 + distuv.Weibull{K: 3, Lambda: 1.5}.LogProb(math.Exp(-20)) + distuv.Weibull{K: 3, Lambda: 1.5}.LogProb(math.E)},
		{"Laplace/node-params", func(b *Builder) {
			b.Sample(Laplace{Mu: b.Real("mu"), Sigma: b.Real("s")}, b.Data("x", reals))
		}, []float64{0.4, 1.9}, sumLogProb(reals, func(int) lpdf { return distuv.Laplace{Mu: 0.4, Scale: 1.9} })},
		{"Laplace/vector-mu", func(b *Builder) {
			b.Sample(Laplace{Mu: b.Real("mu", 5), Sigma: 0.5}, b.Data("x", reals))
		}, []float64{0, 1, 2, 3, 4}, sumLogProb(reals, func(i int) lpdf { return distuv.Laplace{Mu: float64(i), Scale: 0.5} })},
		{"Laplace/at-location", func(b *Builder) {
			b.Real("pad")
			b.Sample(Laplace{Mu: 0.2, Sigma: 3.0}, b.Data("x", []float64{0.2}))
		}, []float64{0}, distuv.Laplace{Mu: 0.2, Scale: 3}.LogProb(0.2)},
		{"Logistic/node-params", func(b *Builder) {
			b.Sample(Logistic{Mu: b.Real("mu"), Sigma: b.Real("s")}, b.Data("x", reals[:4]))
		}, []float64{0.4, 1.9}, sumLogProb(reals[:4], func(int) lpdf { return logisticRef(0.4, 1.9) })},
		{"Logistic/standard", func(b *Builder) {
			// gonum's Logistic.LogProb (v0.17) ignores Mu and S, so it is
			// the reference only for the standard distribution.
			b.Sample(Logistic{Mu: b.Real("mu"), Sigma: 1.0}, b.Data("x", reals[:4]))
		}, []float64{0}, sumLogProb(reals[:4], func(int) lpdf { return distuv.Logistic{Mu: 0, S: 1} })},
		{"Logistic/far-tails", func(b *Builder) {
			b.Sample(Logistic{Mu: b.Real("mu"), Sigma: 0.5}, b.Data("x", reals))
		}, []float64{0.1}, sumLogProb(reals, func(int) lpdf { return logisticRef(0.1, 0.5) })},
		{"VonMises/node-params", func(b *Builder) {
			b.Sample(VonMises{Mu: b.Real("mu"), Kappa: b.Real("k")}, b.Data("x", angles))
		}, []float64{0.4, 2.5}, sumLogProb(angles, func(int) lpdf { return vonMisesRef(0.4, 2.5) })},
		{"VonMises/large-kappa", func(b *Builder) {
			b.Sample(VonMises{Mu: b.Real("mu"), Kappa: b.Real("k")}, b.Data("x", angles))
		}, []float64{0.4, 300}, sumLogProb(angles, func(int) lpdf { return vonMisesRef(0.4, 300) })},
		{"VonMises/node-x/vector-kappa", func(b *Builder) {
			b.Sample(VonMises{Mu: -1.0, Kappa: []float64{0, 1e-6, 30, 1e4}}, b.Real("x", 4))
		}, angles[:4], vonMisesRef(-1, 0).LogProb(angles[0]) + vonMisesRef(-1, 1e-6).LogProb(angles[1]) +
			vonMisesRef(-1, 30).LogProb(angles[2]) + vonMisesRef(-1, 1e4).LogProb(angles[3])},
	}
	checkDistCases(t, cases)
}

// vonMisesRef is the von Mises log-density with log I₀(κ) from the
// integral I₀(κ) = (1/π)∫₀^π e^{κ cos θ} dθ by the midpoint rule, exact to
// rounding for this periodic integrand.
func vonMisesRef(mu, kappa float64) lpdf {
	const n = 2000
	s := 0.0
	for i := range n {
		s += math.Exp(kappa * (math.Cos(math.Pi*(float64(i)+0.5)/n) - 1))
	}
	logI0 := kappa + math.Log(s/n)
	return lpdfFunc(func(x float64) float64 { return kappa*math.Cos(x-mu) - math.Log(2*math.Pi) - logI0 })
}

func TestContinuousDistributionErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(b *Builder)
	}{
		{"weibull-negative-x", func(b *Builder) { b.Sample(Weibull{Alpha: b.Real("a"), Sigma: 1.0}, b.Data("x", []float64{1, -1})) }},
		{"weibull-zero-x", func(b *Builder) { b.Sample(Weibull{Alpha: b.Real("a"), Sigma: 1.0}, b.Data("x", []float64{0})) }},
		{"weibull-zero-shape", func(b *Builder) { b.Sample(Weibull{Alpha: 0.0, Sigma: b.Real("s")}, b.Data("x", []float64{1})) }},
		{"weibull-negative-scale", func(b *Builder) { b.Sample(Weibull{Alpha: b.Real("a"), Sigma: -1.0}, b.Data("x", []float64{1})) }},
		{"laplace-zero-scale", func(b *Builder) { b.Sample(Laplace{Mu: b.Real("m"), Sigma: 0.0}, b.Data("x", []float64{1})) }},
		{"vonmises-negative-kappa", func(b *Builder) { b.Sample(VonMises{Mu: b.Real("m"), Kappa: -1.0}, b.Data("x", []float64{1})) }},
		{"logistic-negative-scale", func(b *Builder) {
			b.Sample(Logistic{Mu: b.Real("m"), Sigma: []float64{1, -2}}, b.Data("x", []float64{1, 2}))
		}},
	} {
		t.Run(c.name, func(t *testing.T) { checkBuildFails(t, c.build) })
	}
}
