package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/models/factor"
	"github.com/trjgo/trj/models/robustvs"
	"github.com/trjgo/trj/ppl"
)

// The factor-analysis reference π(2 factors | y) and its standard error:
// factor.ReferencePi2, made without trj's pilots, transports or jumps
// (bench/factorref). Every score reads them from here.
const (
	factorRefP2  = factor.ReferencePi2
	factorRefSE2 = factor.ReferencePi2SE
)

// Prior of every regression subset model: β | σ² ~ N(0, σ²·g·I),
// σ² ~ InvGamma(a, b) (normal-inverse-gamma, closed-form evidence).
const regA, regB, regG = 3.0, 2.0, 1.0

// problem is one model space with its reference answer.
type problem struct {
	name   string
	space  *ppl.Space
	labels []string
	prior  []float64
	// ref[k] is the reference π(k | y), refSE its standard error (nil:
	// exact); logZ the exact log evidences when known.
	ref, refSE, logZ []float64
	// quantity names what is scored.
	quantity string
	// header and rows are the data the R script reads.
	header []string
	rows   [][]float64
}

func newProblem(name string) (*problem, error) {
	switch name {
	case "regression":
		return regressionProblem()
	case "robustvs":
		return robustProblem()
	case "factor":
		return factorProblem()
	}
	return nil, fmt.Errorf("unknown problem %q (regression, robustvs, factor)", name)
}

// writeData writes the problem's data as CSV for the R script.
func (pr *problem) writeData(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(pr.header)
	for _, r := range pr.rows {
		rec := make([]string, len(r))
		for j, v := range r {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// regressionData is n observations of four predictors and a response
// y = 0.9·x₁ + 0.3·x₂ + ε, ε ~ N(0, 1), from a fixed stream (the data of
// trj's TestModelEvidenceRare): the 16 subsets range in posterior
// probability from about 0.5 to below 10⁻¹², the models without x₁ being
// the rare ones.
func regressionData(n int) (x [][]float64, y []float64) {
	rng := rand.New(rand.NewPCG(26, 16))
	x = make([][]float64, n)
	y = make([]float64, n)
	for i := range x {
		x[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		y[i] = 0.9*x[i][0] + 0.3*x[i][1] + rng.NormFloat64()
	}
	return x, y
}

// regressionModel is y ~ N(X_S β, σ²) for the predictors in subset S, with
// parameters β (|S| of them) then σ².
func regressionModel(x [][]float64, y []float64, subset []int) (ppl.Model, error) {
	b := ppl.NewBuilder()
	var beta *gorgonia.Node
	if len(subset) > 0 {
		beta = b.Real("beta", len(subset))
	}
	sigma2 := b.Positive("sigma2")
	b.Sample(ppl.InverseGamma{Shape: regA, Scale: regB}, sigma2)
	sigma := b.Check(gorgonia.Sqrt(sigma2))
	var mu any = 0.0
	if beta != nil {
		b.Sample(ppl.Normal{Mu: 0, Sigma: b.Check(gorgonia.Mul(sigma, gorgonia.NewConstant(math.Sqrt(regG))))}, beta)
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

// regressionLogZ is log p(y | S): y ~ t_{2a}(0, (b/a)·Σ), Σ = I + g·X_S X_Sᵀ.
func regressionLogZ(x [][]float64, y []float64, subset []int) (float64, error) {
	n := len(y)
	sigma := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			var v float64
			for _, s := range subset {
				v += regG * x[i][s] * x[j][s]
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
	la, _ := math.Lgamma(regA)
	lan, _ := math.Lgamma(regA + float64(n)/2)
	return lan - la + regA*math.Log(regB) - float64(n)/2*math.Log(2*math.Pi) - chol.LogDet()/2 -
		(regA+float64(n)/2)*math.Log(regB+q/2), nil
}

// regressionProblem is the 16 subsets of four predictors (model index =
// inclusion bit mask, label the inclusion vector), uniform model prior.
func regressionProblem() (*problem, error) {
	x, y := regressionData(100)
	pr := &problem{name: "regression", quantity: "every model's probability", header: []string{"y", "x1", "x2", "x3", "x4"}}
	var models []ppl.Model
	for mask := range 16 {
		var subset []int
		label := ""
		for j := range 4 {
			if mask&(1<<j) != 0 {
				subset = append(subset, j)
				label += "1"
			} else {
				label += "0"
			}
		}
		m, err := regressionModel(x, y, subset)
		if err != nil {
			return nil, err
		}
		lz, err := regressionLogZ(x, y, subset)
		if err != nil {
			return nil, err
		}
		models = append(models, m)
		pr.labels = append(pr.labels, label)
		pr.logZ = append(pr.logZ, lz)
		pr.prior = append(pr.prior, 1.0/16)
	}
	sp, err := ppl.NewSpace(models, ppl.WithLabels(pr.labels...))
	if err != nil {
		return nil, err
	}
	pr.space = sp
	if pr.ref, _, err = trj.PosteriorProbabilities(pr.logZ, nil, pr.prior); err != nil {
		return nil, err
	}
	for i := range y {
		pr.rows = append(pr.rows, append([]float64{y[i]}, x[i]...))
	}
	return pr, nil
}

// robustProblem is the paper's robust variable selection (four models,
// exact probabilities by quadrature: robustvs.Truth).
func robustProblem() (*problem, error) {
	d, err := robustvs.DefaultData()
	if err != nil {
		return nil, err
	}
	sp, err := robustvs.NewSpace(d)
	if err != nil {
		return nil, err
	}
	pr := &problem{name: "robustvs", space: sp, labels: robustvs.Labels(), ref: robustvs.Truth(),
		quantity: "every model's probability", header: []string{"y", "X.1", "X.2", "X.3", "X.4"}}
	for range pr.ref {
		pr.prior = append(pr.prior, 1/float64(len(pr.ref)))
	}
	n, p := d.X.Dims()
	for i := range n {
		row := []float64{d.Y[i]}
		for j := range p {
			row = append(row, d.X.At(i, j))
		}
		pr.rows = append(pr.rows, row)
	}
	return pr, nil
}

// factorProblem is factor analysis with 2 or 3 factors; the reference is
// factorRefP2 ± factorRefSE2.
func factorProblem() (*problem, error) {
	y, err := factor.DefaultData()
	if err != nil {
		return nil, err
	}
	sp, err := factor.NewSpace(y)
	if err != nil {
		return nil, err
	}
	pr := &problem{name: "factor", space: sp, labels: []string{"2", "3"}, prior: []float64{0.5, 0.5},
		ref: []float64{factorRefP2, 1 - factorRefP2}, refSE: []float64{factorRefSE2, factorRefSE2},
		quantity: "π(2 factors)"}
	n, p := y.Dims()
	for j := range p {
		pr.header = append(pr.header, fmt.Sprintf("x%d", j+1))
	}
	for i := range n {
		pr.rows = append(pr.rows, mat.Row(nil, i, y))
	}
	return pr, nil
}
