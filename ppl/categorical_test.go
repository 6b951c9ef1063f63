package ppl

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// softmax returns exp(v) normalised.
func softmax(v []float64) []float64 {
	out := make([]float64, len(v))
	lse := floats.LogSumExp(v)
	for i, x := range v {
		out[i] = math.Exp(x - lse)
	}
	return out
}

// categoricalRef sums gonum's categorical log-probabilities of categories
// numbered from one.
func categoricalRef(p, ys []float64) float64 {
	c := distuv.NewCategorical(p, nil)
	s := 0.0
	for _, y := range ys {
		s += c.LogProb(y - 1)
	}
	return s
}

// multinomialRef is the multinomial log-pmf written from its definition.
func multinomialRef(p, n []float64) float64 {
	lp := lg(floats.Sum(n) + 1)
	for k := range n {
		lp -= lg(n[k] + 1)
		if n[k] > 0 {
			lp += n[k] * math.Log(p[k])
		}
	}
	return lp
}

// dirichletRef is the Dirichlet log-density written from its definition.
func dirichletRef(a, x []float64) float64 {
	lp := lg(floats.Sum(a))
	for k := range a {
		lp += (a[k]-1)*math.Log(x[k]) - lg(a[k])
	}
	return lp
}

// sumLogX is the log-Jacobian of the additive log-ratio simplex transform
// at the simplex x: Σ log x_k.
func sumLogX(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += math.Log(v)
	}
	return s
}

func TestCategoricalDistributions(t *testing.T) {
	ys := []float64{1, 3, 3, 2, 1}
	p := []float64{0.2, 0.5, 0.3}
	eta := []float64{0.3, -1, 2}
	simplexU := []float64{0.3, -1.2}
	simplexX := softmax([]float64{0.3, -1.2, 0})
	counts := []float64{3, 0, 5, 1, 1, 0}
	pointwise := func(b *Builder, d Distribution, x Operand) {
		lps, err := d.LogProbs(b.Check(b.Data("y", x.([]float64)), nil))
		b.AddLogDensity(b.Check(lps, err))
	}
	cases := []distCase{
		{"Categorical/node-p", func(b *Builder) {
			b.Sample(Categorical{P: b.Real("p", 3)}, b.Data("y", ys))
		}, p, categoricalRef(p, ys)},
		{"Categorical/node-p/pointwise", func(b *Builder) {
			pointwise(b, Categorical{P: b.Real("p", 3)}, ys)
		}, p, categoricalRef(p, ys)},
		{"Categorical/simplex", func(b *Builder) {
			b.Sample(Categorical{P: b.Simplex("p", 3)}, b.Data("y", ys))
		}, simplexU, categoricalRef(simplexX, ys) + sumLogX(simplexX)},
		{"Categorical/zero-probability-unobserved", func(b *Builder) {
			b.Sample(Categorical{P: b.Real("p", 3)}, b.Data("y", []float64{1, 3}))
		}, []float64{0.4, 0, 0.6}, math.Log(0.4) + math.Log(0.6)},
		{"Categorical/zero-probability-unobserved/pointwise", func(b *Builder) {
			pointwise(b, Categorical{P: b.Real("p", 3)}, []float64{1, 3})
		}, []float64{0.4, 0, 0.6}, math.Log(0.4) + math.Log(0.6)},
		{"Categorical/const-p", func(b *Builder) {
			b.Real("pad")
			b.Sample(Categorical{P: p}, b.Data("y", ys))
		}, []float64{0}, categoricalRef(p, ys)},
		{"CategoricalLogit", func(b *Builder) {
			b.Sample(CategoricalLogit{Logit: b.Real("eta", 3)}, b.Data("y", ys))
		}, eta, categoricalRef(softmax(eta), ys)},
		{"CategoricalLogit/pointwise", func(b *Builder) {
			pointwise(b, CategoricalLogit{Logit: b.Real("eta", 3)}, ys)
		}, eta, categoricalRef(softmax(eta), ys)},
		{"CategoricalLogit/far-logits", func(b *Builder) {
			b.Sample(CategoricalLogit{Logit: b.Real("eta", 3)}, b.Data("y", ys))
		}, []float64{-800, 0, 800}, -2*1600 - 800 - 2*0 + 0},
		{"Multinomial/vector", func(b *Builder) {
			b.Sample(Multinomial{P: b.Real("p", 3)}, b.Data("y", counts[:3]))
		}, p, multinomialRef(p, counts[:3])},
		{"Multinomial/matrix", func(b *Builder) {
			b.Sample(Multinomial{P: b.Simplex("p", 3)}, b.DataMatrix("y", mat.NewDense(2, 3, counts)))
		}, simplexU, multinomialRef(simplexX, counts[:3]) + multinomialRef(simplexX, counts[3:]) + sumLogX(simplexX)},
		{"Multinomial/matrix/pointwise", func(b *Builder) {
			lps, err := Multinomial{P: b.Real("p", 3)}.LogProbs(b.DataMatrix("y", mat.NewDense(2, 3, counts)))
			b.AddLogDensity(b.Check(lps, err))
		}, p, multinomialRef(p, counts[:3]) + multinomialRef(p, counts[3:])},
		{"Multinomial/two-categories-is-binomial", func(b *Builder) {
			b.Sample(Multinomial{P: b.Real("p", 2)}, b.Data("y", []float64{3, 4}))
		}, []float64{0.35, 0.65}, distuv.Binomial{N: 7, P: 0.35}.LogProb(3)},
		{"MultinomialLogit/matrix", func(b *Builder) {
			b.Sample(MultinomialLogit{Logit: b.Real("eta", 3)}, b.DataMatrix("y", mat.NewDense(2, 3, counts)))
		}, eta, multinomialRef(softmax(eta), counts[:3]) + multinomialRef(softmax(eta), counts[3:])},
		{"MultinomialLogit/matrix/pointwise", func(b *Builder) {
			lps, err := MultinomialLogit{Logit: b.Real("eta", 3)}.LogProbs(b.DataMatrix("y", mat.NewDense(2, 3, counts)))
			b.AddLogDensity(b.Check(lps, err))
		}, eta, multinomialRef(softmax(eta), counts[:3]) + multinomialRef(softmax(eta), counts[3:])},
	}
	checkDistCases(t, cases)
}

func TestDirichlet(t *testing.T) {
	alpha := []float64{0.7, 2.5, 1.3}
	simplexU := []float64{0.3, -1.2}
	simplexX := softmax([]float64{0.3, -1.2, 0})
	edgeU := []float64{-30, 4} // one entry near 0, one near 1
	edgeX := softmax([]float64{-30, 4, 0})
	rows := []float64{0.2, 0.5, 0.3, 0.6, 0.1, 0.3}
	cases := []distCase{
		{"simplex-parameter/const-alpha", func(b *Builder) {
			b.Sample(Dirichlet{Alpha: alpha}, b.Simplex("x", 3))
		}, simplexU, dirichletRef(alpha, simplexX) + sumLogX(simplexX)},
		{"simplex-parameter/near-edge", func(b *Builder) {
			b.Sample(Dirichlet{Alpha: alpha}, b.Simplex("x", 3))
		}, edgeU, dirichletRef(alpha, edgeX) + sumLogX(edgeX)},
		{"simplex-parameter/scalar-alpha", func(b *Builder) {
			b.Sample(Dirichlet{Alpha: 1.5}, b.Simplex("x", 3))
		}, simplexU, dirichletRef([]float64{1.5, 1.5, 1.5}, simplexX) + sumLogX(simplexX)},
		{"data-rows/node-alpha", func(b *Builder) {
			b.Sample(Dirichlet{Alpha: b.Real("a", 3)}, b.DataMatrix("x", mat.NewDense(2, 3, rows)))
		}, alpha, dirichletRef(alpha, rows[:3]) + dirichletRef(alpha, rows[3:])},
		{"data-rows/node-scalar-alpha", func(b *Builder) {
			b.Sample(Dirichlet{Alpha: b.Real("a")}, b.DataMatrix("x", mat.NewDense(2, 3, rows)))
		}, []float64{0.8}, dirichletRef([]float64{0.8, 0.8, 0.8}, rows[:3]) + dirichletRef([]float64{0.8, 0.8, 0.8}, rows[3:])},
		{"data-vector/node-alpha", func(b *Builder) {
			b.Sample(Dirichlet{Alpha: b.Real("a", 3)}, b.Data("x", rows[:3]))
		}, alpha, dirichletRef(alpha, rows[:3])},
		{"two-entries-is-beta", func(b *Builder) {
			b.Sample(Dirichlet{Alpha: b.Real("a", 2)}, b.Data("x", []float64{0.3, 0.7}))
		}, []float64{2.5, 0.7}, distuv.Beta{Alpha: 2.5, Beta: 0.7}.LogProb(0.3)},
	}
	checkDistCases(t, cases)
	t.Run("matrix-parameter/pointwise", func(t *testing.T) {
		// Rows of a matrix node, one log-density each.
		m, _ := buildBoth(t, func(b *Builder) {
			x := b.Real("x", 2, 3)
			lps, err := Dirichlet{Alpha: alpha}.LogProbs(x)
			b.AddLogDensity(b.Check(lps, err))
		})
		checkLogDensity(t, "compiled", m, rows, dirichletRef(alpha, rows[:3])+dirichletRef(alpha, rows[3:]), 1e-11)
		checkGradient(t, m, rows, 1e-6)
	})
}

func TestCategoricalDistributionErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(b *Builder)
	}{
		{"categorical-zero", func(b *Builder) { b.Sample(Categorical{P: b.Simplex("p", 3)}, b.Data("y", []float64{1, 0})) }},
		{"categorical-above-k", func(b *Builder) { b.Sample(Categorical{P: b.Simplex("p", 3)}, b.Data("y", []float64{4})) }},
		{"categorical-fraction", func(b *Builder) { b.Sample(CategoricalLogit{Logit: b.Real("e", 3)}, b.Data("y", []float64{1.5})) }},
		{"categorical-p-sum", func(b *Builder) { b.Sample(Categorical{P: []float64{0.5, 0.6}}, b.Data("y", []float64{1})) }},
		{"categorical-p-negative", func(b *Builder) { b.Sample(Categorical{P: []float64{-0.5, 1.5}}, b.Data("y", []float64{1})) }},
		{"categorical-p-scalar", func(b *Builder) { b.Sample(Categorical{P: b.Real("p")}, b.Data("y", []float64{1})) }},
		{"categorical-impossible", func(b *Builder) { b.Sample(Categorical{P: []float64{0, 1}}, b.Data("y", []float64{1})) }},
		{"categorical-computed-obs", func(b *Builder) { b.Sample(Categorical{P: []float64{0.5, 0.5}}, b.Real("y")) }},
		{"multinomial-shape", func(b *Builder) { b.Sample(Multinomial{P: b.Simplex("p", 3)}, b.Data("y", []float64{1, 2})) }},
		{"multinomial-negative", func(b *Builder) { b.Sample(MultinomialLogit{Logit: b.Real("e", 2)}, b.Data("y", []float64{1, -2})) }},
		{"dirichlet-alpha-shape", func(b *Builder) { b.Sample(Dirichlet{Alpha: []float64{1, 2}}, b.Simplex("x", 3)) }},
		{"dirichlet-alpha-zero", func(b *Builder) { b.Sample(Dirichlet{Alpha: []float64{1, 0, 2}}, b.Simplex("x", 3)) }},
		{"dirichlet-not-simplex", func(b *Builder) {
			b.Sample(Dirichlet{Alpha: b.Real("a", 3)}, b.Data("x", []float64{0.2, 0.2, 0.2}))
		}},
		{"dirichlet-zero-entry", func(b *Builder) { b.Sample(Dirichlet{Alpha: b.Real("a", 2)}, b.Data("x", []float64{0, 1})) }},
		{"dirichlet-scalar-obs", func(b *Builder) { b.Sample(Dirichlet{Alpha: 1.0}, b.Real("x")) }},
	} {
		t.Run(c.name, func(t *testing.T) { checkBuildFails(t, c.build) })
	}
}
