// Package conjugate is the normal-inverse-gamma regression over subsets of
// predictors, whose evidence is closed-form: the exact answer that trj's
// tests of model probabilities and the regression problem of
// bench/sidebyside-evidence are scored against.
package conjugate

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ppl"
)

// Prior of every subset model: β | σ² ~ N(0, σ²·g·I), σ² ~ InvGamma(a, b),
// σ² shared by all models.
const A, B, G = 3.0, 2.0, 1.0

// RareData is n observations of four predictors and a response
// y = 0.9·x₁ + 0.3·x₂ + ε, ε ~ N(0, 1), from a fixed stream: the 16 subsets
// then range in posterior probability from about 0.5 to below 10⁻¹², the
// models without x₁ being the rare ones.
func RareData(n int) (x [][]float64, y []float64) {
	rng := rand.New(rand.NewPCG(26, 16))
	x = make([][]float64, n)
	y = make([]float64, n)
	for i := range x {
		x[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		y[i] = 0.9*x[i][0] + 0.3*x[i][1] + rng.NormFloat64()
	}
	return x, y
}

// Model is y ~ N(X_S β, σ²) for the predictors in subset S. Its parameters
// are β (|S| of them) then σ², the parameter every model shares.
func Model(x [][]float64, y []float64, subset []int) (ppl.Model, error) {
	b := ppl.NewBuilder()
	var beta *gorgonia.Node
	if len(subset) > 0 {
		beta = b.Real("beta", len(subset))
	}
	sigma2 := b.Positive("sigma2")
	b.Sample(ppl.InverseGamma{Shape: A, Scale: B}, sigma2)
	sigma := b.Check(gorgonia.Sqrt(sigma2))
	var mu any = 0.0
	if beta != nil {
		b.Sample(ppl.Normal{Mu: 0, Sigma: b.Check(gorgonia.Mul(sigma, gorgonia.NewConstant(math.Sqrt(G))))}, beta)
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

// LogEvidence is log p(y | S): y ~ t_{2a}(0, (b/a)·Σ) with
// Σ = I + g·X_S X_Sᵀ.
func LogEvidence(x [][]float64, y []float64, subset []int) (float64, error) {
	n := len(y)
	sigma := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			var v float64
			for _, s := range subset {
				v += G * x[i][s] * x[j][s]
			}
			if i == j {
				v++
			}
			sigma.SetSym(i, j, v)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(sigma) {
		return 0, fmt.Errorf("subset %v: I + g·XXᵀ not positive definite", subset)
	}
	yv := mat.NewVecDense(n, y)
	var sol mat.VecDense
	if err := chol.SolveVecTo(&sol, yv); err != nil {
		return 0, err
	}
	q := mat.Dot(yv, &sol)
	la, _ := math.Lgamma(A)
	lan, _ := math.Lgamma(A + float64(n)/2)
	return lan - la + A*math.Log(B) - float64(n)/2*math.Log(2*math.Pi) - chol.LogDet()/2 -
		(A+float64(n)/2)*math.Log(B+q/2), nil
}

// AllSubsets is Model and LogEvidence of every subset of the columns of x,
// model index = inclusion bit mask, each labelled by its inclusion vector
// ("101": x₁ and x₃).
func AllSubsets(x [][]float64, y []float64) (models []ppl.Model, labels []string, logZ []float64, err error) {
	nx := len(x[0])
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
		m, err := Model(x, y, subset)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("subset %v: %w", subset, err)
		}
		lz, err := LogEvidence(x, y, subset)
		if err != nil {
			return nil, nil, nil, err
		}
		models = append(models, m)
		labels = append(labels, label)
		logZ = append(logZ, lz)
	}
	return models, labels, logZ, nil
}
