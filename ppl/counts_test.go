package ppl

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// lpdfFunc is a reference log-density written as a closed form.
type lpdfFunc func(x float64) float64

func (f lpdfFunc) LogProb(x float64) float64 { return f(x) }

func lg(x float64) float64 { l, _ := math.Lgamma(x); return l }

// nb2Ref is Stan's neg_binomial_2 pmf written from its definition.
func nb2Ref(mu, phi float64) lpdf {
	return lpdfFunc(func(x float64) float64 {
		return lg(x+phi) - lg(phi) - lg(x+1) + x*math.Log(mu/(mu+phi)) + phi*math.Log(phi/(mu+phi))
	})
}

// nbRef is Stan's neg_binomial(α, β) pmf written from its definition.
func nbRef(a, b float64) lpdf {
	return lpdfFunc(func(x float64) float64 {
		return lg(x+a) - lg(a) - lg(x+1) + a*math.Log(b/(1+b)) - x*math.Log(1+b)
	})
}

// betaBinRef is the beta-binomial pmf written from its definition.
func betaBinRef(n, a, b float64) lpdf {
	lbeta := func(a, b float64) float64 { return lg(a) + lg(b) - lg(a+b) }
	return lpdfFunc(func(x float64) float64 {
		return lg(n+1) - lg(x+1) - lg(n-x+1) + lbeta(x+a, n-x+b) - lbeta(a, b)
	})
}

// distCase is one log-density check: the model build adds, a point u of
// its unconstrained space and the log-density wanted there.
type distCase struct {
	name  string
	build func(b *Builder)
	u     []float64
	want  float64
}

// checkDistCases checks each case's log-density, compiled and on gorgonia's
// tape, against want and its gradient against finite differences.
func checkDistCases(t *testing.T, cases []distCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, tape := buildBoth(t, c.build)
			checkLogDensity(t, "compiled", m, c.u, c.want, 1e-11)
			checkLogDensity(t, "tape", tape, c.u, c.want, 1e-11)
			if m.Dim() > 0 {
				checkGradient(t, m, c.u, 1e-6)
			}
		})
	}
}

func TestCountDistributions(t *testing.T) {
	counts := []float64{0, 3, 7, 1, 5}
	trials := []float64{5, 3, 10, 4, 5} // x = 0 and x = N: both edges
	bits := []float64{1, 0, 0, 1}
	p4 := []float64{0.3, 0.01, 0.99, 0.7}
	cases := []distCase{
		{"Binomial/node-p", func(b *Builder) {
			b.Sample(Binomial{N: trials, P: b.Real("p")}, b.Data("y", counts))
		}, []float64{0.35}, sumLogProb(counts, func(i int) lpdf { return distuv.Binomial{N: trials[i], P: 0.35} })},
		{"Binomial/node-p-vector-near-edges", func(b *Builder) {
			b.Sample(Binomial{N: 7, P: b.Real("p", 4)}, b.Data("y", []float64{0, 0, 7, 7}))
		}, []float64{1e-9, 0.5, 1 - 1e-9, 0.5}, sumLogProb([]float64{0, 0, 7, 7}, func(i int) lpdf {
			return distuv.Binomial{N: 7, P: []float64{1e-9, 0.5, 1 - 1e-9, 0.5}[i]}
		})},
		{"Binomial/p-exactly-at-edges", func(b *Builder) {
			// Zero failures meet P = 1 and zero successes P = 0: finite.
			b.Sample(Binomial{N: 4, P: b.Real("p", 2)}, b.Data("y", []float64{4, 0}))
		}, []float64{1, 0}, 0},
		{"Binomial/const", func(b *Builder) {
			b.Real("pad")
			b.Sample(Binomial{N: trials, P: 0.0}, b.Data("y", []float64{0, 0, 0, 0, 0}))
		}, []float64{0}, 0},
		{"Poisson/node-rate", func(b *Builder) {
			b.Sample(Poisson{Rate: b.Real("r", 4)}, b.Data("y", counts[:4]))
		}, []float64{0.5, 3, 2, 40}, sumLogProb(counts[:4], func(i int) lpdf {
			return distuv.Poisson{Lambda: []float64{0.5, 3, 2, 40}[i]}
		})},
		{"Poisson/rate-near-zero", func(b *Builder) {
			// Through the log transform, whose log-Jacobian is u.
			b.Sample(Poisson{Rate: b.Positive("r", 2)}, b.Data("y", []float64{0, 7}))
		}, []float64{-30, -18}, -48 + distuv.Poisson{Lambda: math.Exp(-30)}.LogProb(0) + distuv.Poisson{Lambda: math.Exp(-18)}.LogProb(7)},
		{"Poisson/zero-rate-zero-count", func(b *Builder) {
			b.Sample(Poisson{Rate: b.Real("r")}, b.Data("y", []float64{0, 0}))
		}, []float64{0}, 0},
		{"BernoulliProb/node-p", func(b *Builder) {
			b.Sample(BernoulliProb{P: b.Real("p", 4)}, b.Data("y", bits))
		}, p4, sumLogProb(bits, func(i int) lpdf { return distuv.Bernoulli{P: p4[i]} })},
		{"BernoulliProb/p-near-edges", func(b *Builder) {
			// Through the logit transform, whose log-Jacobian is log p(1 − p).
			b.Sample(BernoulliProb{P: b.Interval("p", 0.0, 1.0, 4)}, b.Data("y", bits))
		}, []float64{-10, 10, -10, 10}, sumLogProb(bits, func(i int) lpdf {
			return distuv.Bernoulli{P: logistic([]float64{-10, 10, -10, 10}[i])}
		}) + 4*(-10-2*math.Log1p(math.Exp(-10)))},
		{"BernoulliProb/p-at-edges", func(b *Builder) {
			b.Sample(BernoulliProb{P: b.Real("p", 2)}, b.Data("y", []float64{1, 0}))
		}, []float64{1, 0}, 0},
		{"BernoulliProb/scalar-p", func(b *Builder) {
			b.Sample(BernoulliProb{P: b.Real("p")}, b.Data("y", bits))
		}, []float64{0.2}, sumLogProb(bits, func(int) lpdf { return distuv.Bernoulli{P: 0.2} })},
		{"NegBinomial2/node-params", func(b *Builder) {
			b.Sample(NegBinomial2{Mu: b.Real("mu"), Phi: b.Real("phi")}, b.Data("y", counts))
		}, []float64{2.5, 1.7}, sumLogProb(counts, func(int) lpdf { return nb2Ref(2.5, 1.7) })},
		{"NegBinomial2/large-phi", func(b *Builder) {
			b.Sample(NegBinomial2{Mu: b.Real("mu"), Phi: 1e6}, b.Data("y", counts))
		}, []float64{2.5}, sumLogProb(counts, func(int) lpdf { return nb2Ref(2.5, 1e6) })},
		{"NegBinomial2Log", func(b *Builder) {
			b.Sample(NegBinomial2Log{LogMu: b.Real("eta", 5), Phi: b.Real("phi")}, b.Data("y", counts))
		}, []float64{0.1, 1, -30, 2, 3, 0.8}, sumLogProb(counts, func(i int) lpdf {
			return nb2Ref(math.Exp([]float64{0.1, 1, -30, 2, 3}[i]), 0.8)
		})},
		{"NegBinomial/node-params", func(b *Builder) {
			b.Sample(NegBinomial{Alpha: b.Real("a"), Beta: b.Real("b")}, b.Data("y", counts))
		}, []float64{1.3, 0.4}, sumLogProb(counts, func(int) lpdf { return nbRef(1.3, 0.4) })},
		{"NegBinomial/equals-NegBinomial2", func(b *Builder) {
			b.Sample(NegBinomial{Alpha: 1.7, Beta: b.Real("b")}, b.Data("y", counts))
		}, []float64{1.7 / 2.5}, sumLogProb(counts, func(int) lpdf { return nb2Ref(2.5, 1.7) })},
		{"BetaBinomialCounts", func(b *Builder) {
			b.Sample(BetaBinomialCounts{N: trials, Alpha: b.Real("a"), Beta: b.Real("b")}, b.Data("y", counts))
		}, []float64{2.2, 0.6}, sumLogProb(counts, func(i int) lpdf { return betaBinRef(trials[i], 2.2, 0.6) })},
	}
	checkDistCases(t, cases)
}

// TestCountDistributionsNormalised sums each pmf over its support.
func TestCountDistributionsNormalised(t *testing.T) {
	for _, c := range []struct {
		name string
		d    Distribution
		max  int
	}{
		{"Binomial", Binomial{N: 9, P: 0.3}, 9},
		{"Poisson", Poisson{Rate: 3.5}, 60},
		{"NegBinomial2", NegBinomial2{Mu: 3, Phi: 2.5}, 400},
		{"NegBinomial2Log", NegBinomial2Log{LogMu: 1, Phi: 0.9}, 800},
		{"NegBinomial", NegBinomial{Alpha: 2.5, Beta: 0.8}, 400},
		{"BetaBinomialCounts", BetaBinomialCounts{N: 12, Alpha: 0.7, Beta: 2.1}, 12},
	} {
		xs := make([]float64, c.max+1)
		for i := range xs {
			xs[i] = float64(i)
		}
		b := NewBuilder()
		lp, err := c.d.LogProbs(b.Data("y", xs))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		v, ok := constValues(lp)
		if !ok {
			t.Fatalf("%s: constant parameters gave a graph node", c.name)
		}
		s := 0.0
		for _, l := range v {
			s += math.Exp(l)
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("%s: probabilities sum to %.15g", c.name, s)
		}
	}
}

func TestCountDistributionErrors(t *testing.T) {
	y := []float64{0, 2}
	for _, c := range []struct {
		name  string
		build func(b *Builder)
	}{
		{"binomial-p-above-one", func(b *Builder) { b.Sample(Binomial{N: 3, P: 1.5}, b.Data("y", y)) }},
		{"binomial-node-n", func(b *Builder) { b.Sample(Binomial{N: b.Real("n"), P: 0.5}, b.Data("y", y)) }},
		{"binomial-too-many", func(b *Builder) { b.Sample(Binomial{N: 1, P: b.Real("p")}, b.Data("y", y)) }},
		{"binomial-impossible", func(b *Builder) { b.Sample(Binomial{N: 3, P: 0.0}, b.Data("y", y)) }},
		{"poisson-negative-rate", func(b *Builder) { b.Sample(Poisson{Rate: -1.0}, b.Data("y", y)) }},
		{"poisson-fraction", func(b *Builder) { b.Sample(Poisson{Rate: b.Real("r")}, b.Data("y", []float64{0.5})) }},
		{"poisson-computed-obs", func(b *Builder) { b.Sample(Poisson{Rate: 1.0}, b.Real("x")) }},
		{"bernoulli-two", func(b *Builder) { b.Sample(BernoulliProb{P: b.Real("p")}, b.Data("y", y)) }},
		{"bernoulli-p-negative", func(b *Builder) { b.Sample(BernoulliProb{P: -0.1}, b.Data("y", []float64{0, 1})) }},
		{"bernoulli-impossible", func(b *Builder) { b.Sample(BernoulliProb{P: 1.0}, b.Data("y", []float64{0, 1})) }},
		{"negbin2-zero-mu", func(b *Builder) { b.Sample(NegBinomial2{Mu: 0.0, Phi: b.Real("phi")}, b.Data("y", y)) }},
		{"negbin2-negative-phi", func(b *Builder) { b.Sample(NegBinomial2{Mu: b.Real("mu"), Phi: -2.0}, b.Data("y", y)) }},
		{"negbin2log-zero-phi", func(b *Builder) { b.Sample(NegBinomial2Log{LogMu: b.Real("e"), Phi: 0.0}, b.Data("y", y)) }},
		{"negbin-zero-alpha", func(b *Builder) { b.Sample(NegBinomial{Alpha: 0.0, Beta: b.Real("b")}, b.Data("y", y)) }},
		{"negbin-negative-beta", func(b *Builder) { b.Sample(NegBinomial{Alpha: b.Real("a"), Beta: []float64{1, -1}}, b.Data("y", y)) }},
		{"betabin-zero-alpha", func(b *Builder) { b.Sample(BetaBinomialCounts{N: 3, Alpha: 0.0, Beta: b.Real("b")}, b.Data("y", y)) }},
		{"betabin-too-many", func(b *Builder) { b.Sample(BetaBinomialCounts{N: 1, Alpha: 1.0, Beta: b.Real("b")}, b.Data("y", y)) }},
	} {
		t.Run(c.name, func(t *testing.T) { checkBuildFails(t, c.build) })
	}
}
