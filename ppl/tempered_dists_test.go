package ppl

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// newPriors is a model whose priors are the distributions added with the
// Weibull, Laplace, Logistic, Dirichlet and LKJCholesky samplers.
func newPriors(b *Builder) {
	w := b.Positive("w")
	l := b.Real("l", 2)
	g := b.Real("g")
	p := b.Simplex("p", 3)
	c := b.CholeskyFactorCorr("C", 3)
	b.Sample(Weibull{Alpha: 2, Sigma: 1.5}, w)
	b.Sample(Laplace{Mu: 1, Sigma: 0.5}, l)
	b.Sample(Logistic{Mu: -1, Sigma: 2}, g)
	b.Sample(Dirichlet{Alpha: []float64{2, 3, 5}}, p)
	b.Sample(LKJCholesky{Eta: 2}, c)
	b.Sample(Categorical{P: p}, b.Data("y", []float64{1, 3, 3}))
	b.Sample(Normal{Mu: w, Sigma: 1}, 0.8)
}

// TestSamplePriorNewDistributions checks the prior form of newPriors and
// the means and variances of its draws against their exact values within
// 4 standard errors.
func TestSamplePriorNewDistributions(t *testing.T) {
	m, tm := temperedForm(t, newPriors, true)
	cols := priorDraws(t, m, tm, rand.New(rand.NewPCG(5, 6)), func(i int, u, _ []float64, cols map[string][]float64) {
		if i < 3 {
			checkParts(t, m, tm, u)
		}
		// R = CCᵀ: R₃₂ = C₃₁C₂₁ + C₃₂C₂₂.
		at := func(name string) float64 { return cols[name][len(cols[name])-1] }
		cols["R32"] = append(cols["R32"], at("C.3.1")*at("C.2.1")+at("C.3.2")*at("C.2.2"))
	})
	g15 := math.Gamma(1.5)
	checkMoments(t, cols, []moment{
		{"w", 1.5 * g15, 2.25 * (1 - g15*g15)},
		{"l.2", 1, 0.5},
		{"g", -1, 4 * math.Pi * math.Pi / 3},
		{"p.1", 0.2, 2.0 * 8 / (100 * 11)},
		{"p.3", 0.5, 5.0 * 5 / (100 * 11)},
		// An LKJ(η) correlation is 2B − 1, B ~ Beta(η − 1 + K/2, same):
		// variance 1/(2η + K − 1).
		{"C.2.1", 0, 1.0 / 6},
		{"R32", 0, 1.0 / 6},
	})
}

// priorDrawCount is how many prior draws priorDraws makes.
const priorDrawCount = 4000

// moment is a parameter's exact mean and variance.
type moment struct {
	name           string
	mean, variance float64
}

// checkMoments checks the mean and variance of each moment's column of
// cols, priorDrawCount draws, against their exact values within 4
// standard errors.
func checkMoments(t *testing.T, cols map[string][]float64, wants []moment) {
	t.Helper()
	const n = priorDrawCount
	for _, want := range wants {
		x := cols[want.name]
		mean, sd := stat.MeanStdDev(x, nil)
		if se := math.Sqrt(want.variance / n); math.Abs(mean-want.mean) > 4*se {
			t.Errorf("%s: mean %.4f, want %.4f ± %.4f", want.name, mean, want.mean, se)
		}
		// The variance's standard error, from the sample fourth moment.
		m4 := 0.0
		for _, xi := range x {
			m4 += math.Pow(xi-mean, 4) / n
		}
		if se := math.Sqrt((m4 - want.variance*want.variance) / n); math.Abs(sd*sd-want.variance) > 4*se {
			t.Errorf("%s: variance %.4f, want %.4f ± %.4f", want.name, sd*sd, want.variance, se)
		}
	}
}

// priorDraws returns the constrained draws of each parameter of m, by
// name, over priorDrawCount draws from tm's prior with rng; each, called with every
// draw's index i, its point u and constrained values c, may add columns of
// its own.
func priorDraws(t *testing.T, m *GraphModel, tm *TemperedModel, rng *rand.Rand, each func(i int, u, c []float64, cols map[string][]float64)) map[string][]float64 {
	t.Helper()
	u := make([]float64, m.Dim())
	c := make([]float64, len(m.ParamNames()))
	cols := map[string][]float64{}
	for i := range priorDrawCount {
		if err := tm.SamplePrior(rng, u); err != nil {
			t.Fatal(err)
		}
		if err := m.Constrain(u, c); err != nil {
			t.Fatal(err)
		}
		for j, name := range m.ParamNames() {
			cols[name] = append(cols[name], c[j])
		}
		each(i, u, c, cols)
	}
	return cols
}
