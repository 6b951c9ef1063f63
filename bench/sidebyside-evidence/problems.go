package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/internal/checks/conjugate"
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

// regressionProblem is the 16 subsets of four predictors (model index =
// inclusion bit mask, label the inclusion vector), uniform model prior, on
// conjugate.RareData(100), the data of trj's TestModelEvidenceRare: the
// models range in posterior probability from about 0.5 to below 10⁻¹².
func regressionProblem() (*problem, error) {
	x, y := conjugate.RareData(100)
	pr := &problem{name: "regression", quantity: "every model's probability", header: []string{"y", "x1", "x2", "x3", "x4"}}
	models, labels, logZ, err := conjugate.AllSubsets(x, y)
	if err != nil {
		return nil, err
	}
	pr.labels, pr.logZ = labels, logZ
	for range models {
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
