package docs_test

// The code of guide.md's section on variable selection. Each region
// between "// snippet:NAME" and "// endsnippet:NAME" appears verbatim in
// the guide (TestMarkdown checks it); TestGuideSelection runs it and checks
// the inclusion probabilities against the exact ones.

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/selection"
)

// snippet:selectdata
// readTable reads an embedded CSV data set with a header row: the column
// called response, and every other column as a candidate predictor.
func readTable(name, response string) (X *mat.Dense, y []float64, names []string, err error) {
	f, err := datasets.Open(name)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, nil, nil, err
	}
	yc := slices.Index(rows[0], response)
	if yc < 0 {
		return nil, nil, nil, fmt.Errorf("%s: no column %q", name, response)
	}
	names = slices.Delete(slices.Clone(rows[0]), yc, yc+1)
	X = mat.NewDense(len(rows)-1, len(names), nil)
	for i, row := range rows[1:] {
		v := make([]float64, len(row))
		for j, s := range row {
			if v[j], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, nil, nil, fmt.Errorf("%s: row %d: %w", name, i+1, err)
			}
		}
		y = append(y, v[yc])
		X.SetRow(i, slices.Delete(v, yc, yc+1))
	}
	return X, y, names, nil
}

// endsnippet:selectdata

// snippet:varselect
// whichPredictors asks which of the 20 candidate predictors of the linear
// data set matter: 2²⁰ models, each built when a chain first visits it.
func whichPredictors(ctx context.Context, w io.Writer, settings *selection.Settings) (*selection.Result, error) {
	X, y, names, err := readTable(datasets.SelectLinear, "y")
	if err != nil {
		return nil, err
	}
	// Gaussian family, default g-prior (g = n), intercept always in.
	sp, err := glmselect.Gaussian(X, y, &glmselect.Settings{Names: names})
	if err != nil {
		return nil, err
	}
	res, err := selection.Run(ctx, sp, settings) // nil settings: the defaults
	if err != nil {
		return nil, err
	}
	fmt.Fprint(w, res) // inclusion probabilities ± MCSE, R̂, top models
	return res, nil
}

// endsnippet:varselect

// snippet:ownselect
// robustSelection is a selection space of your own model: a regression
// with Student-t errors (4 degrees of freedom, scale σ), N(0, 2.5²)
// coefficients on the columns of X (standardise them first), an N(0, 10²)
// intercept and σ ~ HalfNormal(1) shared by all models.
func robustSelection(X *mat.Dense, y []float64) (*ppl.SelectionSpace, error) {
	n, p := X.Dims()
	build := func(b *ppl.Builder, terms ppl.Terms) error {
		active := terms.Indices()                // the model's terms, increasing
		Z := mat.NewDense(n, 1+len(active), nil) // intercept, then the active columns
		sd := []float64{10}                      // prior sd of each coefficient
		for i := range n {
			Z.Set(i, 0, 1)
		}
		for k, j := range active {
			Z.SetCol(k+1, mat.Col(nil, j, X))
			sd = append(sd, 2.5)
		}
		beta := b.Real("beta", 1+len(active)) // always-in first, then one per term
		sigma := b.Positive("sigma")          // shared by all models: declared last
		b.Sample(ppl.Normal{Mu: 0.0, Sigma: sd}, beta)
		b.Sample(ppl.HalfNormal{Sigma: 1.0}, sigma)
		mu := b.Check(gorgonia.Mul(b.DataMatrix("Z", Z), beta))
		b.Sample(ppl.StudentT{Nu: 4.0, Mu: mu, Sigma: sigma}, b.Data("y", y))
		return nil
	}
	return ppl.NewSelectionSpace(p, build, ppl.WithSelectionShared(1))
}

// endsnippet:ownselect

// exactPIPs reads the stored exact inclusion probabilities of the linear
// data set under glmselect's default prior (bench/selectref).
func exactPIPs(t *testing.T) []float64 {
	t.Helper()
	b, err := datasets.ReadFile("select/linear_p20_gprior_exact.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ PIP []float64 }
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	return ref.PIP
}

// TestGuideVariableSelection runs the guide's selection code with shorter chains
// and checks every inclusion probability against the exact one: within 4
// MCSE where the chains estimate one, and a term never dropped (or never
// included) only where the exact probability is within 0.01 of 1 (or 0).
func TestGuideVariableSelection(t *testing.T) {
	res, err := whichPredictors(context.Background(), io.Discard, &selection.Settings{Seed: 1, Chains: 2, Warmup: 300, Steps: 1500})
	if err != nil {
		t.Fatal(err)
	}
	exact := exactPIPs(t)
	for j, e := range res.PIP {
		switch {
		case !e.Mixed && math.Abs(e.P-exact[j]) > 0.01:
			t.Errorf("%s: PIP %v in every kept step, exact %.4f", res.Names[j], e.P, exact[j])
		case e.Mixed && math.Abs(e.P-exact[j]) > 4*e.MCSE:
			t.Errorf("%s: PIP %.4f ± %.4f, exact %.4f", res.Names[j], e.P, e.MCSE, exact[j])
		}
	}
	if res.Names[0] != "x1" || len(res.Top) == 0 {
		t.Errorf("names %v, %d top models", res.Names, len(res.Top))
	}
}

// TestGuideOwnSelection runs the robust regression space briefly: it
// builds, samples and finds the strongest predictor of the linear set.
func TestGuideOwnSelection(t *testing.T) {
	X, y, _, err := readTable(datasets.SelectLinear, "y")
	if err != nil {
		t.Fatal(err)
	}
	// Standardise the columns, as glmselect does.
	_, p := X.Dims()
	for j := range p {
		c := mat.Col(nil, j, X)
		var m, s float64
		for _, v := range c {
			m += v / float64(len(c))
		}
		for _, v := range c {
			s += (v - m) * (v - m) / float64(len(c)-1)
		}
		for i, v := range c {
			X.Set(i, j, (v-m)/math.Sqrt(s))
		}
	}
	sp, err := robustSelection(X, y)
	if err != nil {
		t.Fatal(err)
	}
	res, err := selection.Run(context.Background(), sp, &selection.Settings{Seed: 2, Chains: 2, Warmup: 200, Steps: 500})
	if err != nil {
		t.Fatal(err)
	}
	if res.PIP[0].P < 0.9 {
		t.Errorf("PIP of x1 %.3f, want near 1\n%v", res.PIP[0].P, res)
	}
}
