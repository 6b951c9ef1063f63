package trj_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ppl"
)

// regressionData is n observations of three predictors and a response
// y = 0.6·x₁ + 0.25·x₂ + ε, ε ~ N(0, 1), from a fixed stream: every subset
// of the predictors then has a posterior probability between about 0.01
// and 0.5.
func regressionData(n int) (x [][]float64, y []float64) {
	rng := rand.New(rand.NewPCG(7, 11))
	x = make([][]float64, n)
	y = make([]float64, n)
	for i := range x {
		x[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		y[i] = 0.6*x[i][0] + 0.25*x[i][1] + rng.NormFloat64()
	}
	return x, y
}

// Prior of every subset model: β | σ² ~ N(0, σ²·g·I), σ² ~ InvGamma(a, b),
// σ² shared by all models (the normal-inverse-gamma conjugate prior, whose
// evidence is closed-form).
const (
	nigA, nigB, nigG = 3.0, 2.0, 1.0
)

// subsetModel is y ~ N(X_S β, σ²) for the predictors in subset S. Its
// parameters are β (|S| of them) then σ², the parameter every model shares.
func subsetModel(x [][]float64, y []float64, subset []int) (ppl.Model, error) {
	b := ppl.NewBuilder()
	var beta *gorgonia.Node
	if len(subset) > 0 {
		beta = b.Real("beta", len(subset))
	}
	sigma2 := b.Positive("sigma2")
	b.Sample(ppl.InverseGamma{Shape: nigA, Scale: nigB}, sigma2)
	sigma := b.Check(gorgonia.Sqrt(sigma2))
	var mu any = 0.0
	if beta != nil {
		b.Sample(ppl.Normal{Mu: 0, Sigma: b.Check(gorgonia.Mul(sigma, gorgonia.NewConstant(math.Sqrt(nigG))))}, beta)
		design := mat.NewDense(len(y), len(subset), nil)
		for i := range y {
			for j, s := range subset {
				design.Set(i, j, x[i][s])
			}
		}
		mu = b.Check(gorgonia.Mul(b.DataMatrix("X", design), beta))
	}
	b.Sample(ppl.Normal{Mu: mu, Sigma: sigma}, b.Data("y", y))
	return b.Model()
}

// logEvidence is log p(y | S): y ~ t_{2a}(0, (b/a)·Σ) with Σ = I + g·X_S X_Sᵀ.
func logEvidence(x [][]float64, y []float64, subset []int) float64 {
	n := len(y)
	sigma := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			var v float64
			for _, s := range subset {
				v += nigG * x[i][s] * x[j][s]
			}
			if i == j {
				v++
			}
			sigma.SetSym(i, j, v)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(sigma) {
		panic("Σ not positive definite")
	}
	yv := mat.NewVecDense(n, y)
	var sol mat.VecDense
	if err := chol.SolveVecTo(&sol, yv); err != nil {
		panic(err)
	}
	q := mat.Dot(yv, &sol)
	la, _ := math.Lgamma(nigA)
	lan, _ := math.Lgamma(nigA + float64(n)/2)
	return lan - la + nigA*math.Log(nigB) - float64(n)/2*math.Log(2*math.Pi) - chol.LogDet()/2 -
		(nigA+float64(n)/2)*math.Log(nigB+q/2)
}

// subsetSpace is the eight subsets of three predictors, labelled by their
// inclusion vectors, with σ² shared, and the exact posterior probabilities
// under a uniform model prior.
func subsetSpace(n int) (*ppl.Space, []float64, error) {
	x, y := regressionData(n)
	space, p, _, err := allSubsets(x, y)
	return space, p, err
}

// allSubsets is the space of every subset of the columns of x, labelled by
// their inclusion vectors (model index = inclusion bit mask), with the exact
// posterior probabilities under a uniform model prior and the exact log
// evidences.
func allSubsets(x [][]float64, y []float64) (*ppl.Space, []float64, []float64, error) {
	nx := len(x[0])
	var models []ppl.Model
	var labels []string
	var logZ []float64
	for mask := range 1 << nx {
		var subset []int
		label := ""
		for j := range nx {
			if mask&(1<<j) != 0 {
				subset = append(subset, j)
				label += "1"
			} else {
				label += "0"
			}
		}
		m, err := subsetModel(x, y, subset)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("subset %v: %w", subset, err)
		}
		models = append(models, m)
		labels = append(labels, label)
		logZ = append(logZ, logEvidence(x, y, subset))
	}
	space, err := ppl.NewSpace(models, ppl.WithLabels(labels...))
	if err != nil {
		return nil, nil, nil, err
	}
	top := math.Inf(-1)
	for _, l := range logZ {
		top = max(top, l)
	}
	p := make([]float64, len(logZ))
	var sum float64
	for k, l := range logZ {
		p[k] = math.Exp(l - top)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	return space, p, logZ, nil
}

// mustSubsetSpace is subsetSpace's space, ending the test on an error.
func mustSubsetSpace(t *testing.T, n int) *ppl.Space {
	t.Helper()
	space, _, err := subsetSpace(n)
	if err != nil {
		t.Fatal(err)
	}
	return space
}
