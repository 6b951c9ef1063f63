package docs_test

// The code of guide.md's section on variable selection. Each region
// between "// snippet:NAME" and "// endsnippet:NAME" appears verbatim in
// the guide (TestMarkdown checks it); TestGuideSelection runs it and checks
// the inclusion probabilities against the exact ones.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/selection"
)

// snippet:varselect
// whichPredictors asks which of the 15 candidate predictors of the crime
// rate in 47 US states (UScrime) matter, what their coefficients are, and
// what crime rate they predict for a typical state: 2¹⁵ models, each built
// when a chain first visits it.
func whichPredictors(ctx context.Context, w io.Writer, settings *selection.Settings) (*selection.Result, error) {
	f, err := datasets.Open("select/uscrime.csv") // your own: os.Open("data.csv")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := glmselect.ReadData(f, "y", nil) // every other column is a candidate
	if err != nil {
		return nil, err
	}
	// A typical state: every predictor at its median over the 47 states.
	typical := mat.NewDense(1, len(d.Names), nil)
	for j := range d.Names {
		col := mat.Col(nil, j, d.X)
		slices.Sort(col)
		typical.Set(0, j, col[len(col)/2])
	}
	// Gaussian family, default g-prior (g = n: free of the data's units),
	// intercept always in; the typical state's mean y averaged over models.
	sp, err := glmselect.Gaussian(d.X, d.Y, &glmselect.Settings{Names: d.Names, Predict: typical})
	if err != nil {
		return nil, err
	}
	res, err := selection.Run(ctx, sp, settings) // nil settings: the defaults
	if err != nil {
		return nil, err
	}
	fmt.Fprint(w, res) // PIPs, coefficients, the prediction, top models (± MCSE)
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

// bmsUSCrime reads BMS 0.3.5's PIPs and coefficient means of UScrime
// under its defaults (g = "UIP", mprior = "random"), written by
// models/glmselect/testdata/bms_uscrime.R.
func bmsUSCrime(t *testing.T) (pip, mean []float64) {
	t.Helper()
	b, err := os.ReadFile("../models/glmselect/testdata/bms_uscrime.json")
	if err != nil {
		t.Fatal(err)
	}
	var runs []struct {
		Name      string
		PIP, Mean []float64
	}
	if err := json.Unmarshal(b, &runs); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Name == "uip-random" {
			return r.PIP, r.Mean
		}
	}
	t.Fatal("no uip-random run in bms_uscrime.json")
	return nil, nil
}

// TestGuideVariableSelection runs the guide's selection code with shorter
// chains and checks it against the exact enumeration of UScrime's 2¹⁵
// models under the same prior: every PIP and model-averaged coefficient
// within 4 MCSE (a term never dropped only where the exact PIP is within
// 0.01 of 1), and the typical state's prediction within 4 MCSE of the
// exact ȳ + Σ_j E[β_j | y](x_j − x̄_j) (the g-prior's intercept is ȳ on
// the centred predictors in every model). The exact answer is BMS's
// (within 1e-6), the numbers the guide quotes.
func TestGuideVariableSelection(t *testing.T) {
	if raceDetector && testing.Short() {
		// 2 s alone, about 30 s under the race detector; the selection
		// package's tests run the same chains under it.
		t.Skip("skipped with -race -short (run without -race)")
	}
	ctx := context.Background()
	// 2 × 6000 steps: with 2000, a PIP near 1 is left a few times only and
	// its MCSE can be far too small (seed 4 put Ed 6 MCSEs from exact).
	res, err := whichPredictors(ctx, io.Discard, &selection.Settings{Seed: 1, Chains: 2, Warmup: 200, Steps: 6000})
	if err != nil {
		t.Fatal(err)
	}
	f, err := datasets.Open("select/uscrime.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := glmselect.ReadData(f, "y", nil)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := glmselect.NewEvidence(d.X, d.Y, &glmselect.Settings{Names: d.Names})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := ev.Enumerate(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	bmsPIP, bmsMean := bmsUSCrime(t)
	for j := range exact.PIP {
		if math.Abs(exact.PIP[j]-bmsPIP[j]) > 1e-6 || math.Abs(exact.Mean[j]-bmsMean[j]) > 1e-6 {
			t.Errorf("%s: exact PIP %.7f mean %.7f, BMS %.7f %.7f", d.Names[j], exact.PIP[j], exact.Mean[j], bmsPIP[j], bmsMean[j])
		}
	}
	for j, e := range res.PIP {
		switch {
		case !e.Mixed && math.Abs(e.P-exact.PIP[j]) > 0.01:
			t.Errorf("%s: PIP %v in every kept step, exact %.4f", res.Names[j], e.P, exact.PIP[j])
		case e.Mixed && math.Abs(e.P-exact.PIP[j]) > 4*e.MCSE:
			t.Errorf("%s: PIP %.4f ± %.4f, exact %.4f", res.Names[j], e.P, e.MCSE, exact.PIP[j])
		}
		c := res.Coefficients[j]
		if m, se := float64(c.Mean), float64(c.MeanMCSE); !(math.Abs(m-exact.Mean[j]) <= 4*se) {
			t.Errorf("%s: coefficient %.4f ± %.4f, exact %.4f", c.Name, m, se, exact.Mean[j])
		}
	}
	n, p := d.X.Dims()
	want := stat.Mean(d.Y, nil)
	for j := range p {
		col := mat.Col(nil, j, d.X)
		xbar := stat.Mean(col, nil)
		slices.Sort(col)
		want += exact.Mean[j] * (col[n/2] - xbar)
	}
	if len(res.Quantities) != 1 {
		t.Fatalf("%d predictions, want 1", len(res.Quantities))
	}
	if q := res.Quantities[0]; !(math.Abs(float64(q.Mean)-want) <= 4*float64(q.MeanMCSE)) {
		t.Errorf("typical state: predicted %.4f ± %.4f, exact %.4f", float64(q.Mean), float64(q.MeanMCSE), want)
	}
}

// readLinear reads the embedded linear data set (20 predictors, n = 120).
func readLinear(t *testing.T) *glmselect.Data {
	t.Helper()
	f, err := datasets.Open(datasets.SelectLinear)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := glmselect.ReadData(f, "y", nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestGuideOwnSelection runs the robust regression space briefly: it
// builds, samples and finds the strongest predictor of the linear set.
func TestGuideOwnSelection(t *testing.T) {
	d := readLinear(t)
	X, y := d.X, d.Y
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
	res, err := selection.Run(context.Background(), sp, &selection.Settings{Seed: 1, Chains: 2, Warmup: 200, Steps: 6000})
	if err != nil {
		t.Fatal(err)
	}
	if res.PIP[0].P < 0.9 {
		t.Errorf("PIP of x1 %.3f, want near 1\n%v", res.PIP[0].P, res)
	}
}
