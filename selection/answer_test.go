package selection

import (
	"bytes"
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/draws"
)

// answerData is the p = 6 problem of the answer tests: 60 rows from
// selectData, and 3 new rows at which to predict.
func answerData() (X *mat.Dense, y []float64, Xnew *mat.Dense) {
	X, y = selectData(60, 6, 7)
	Xnew = mat.NewDense(3, 6, []float64{
		0, 0, 0, 0, 0, 0,
		1, -1, 0.5, 0, 2, -0.5,
		-1.5, 0.3, -1, 1, 0, 1,
	})
	return X, y, Xnew
}

// exactAnswer enumerates the 64 models of answerData under Gaussian's
// default g-prior: the model-averaged coefficient means E[β_j] (data
// units), E[β_j | j in] and the predictions' means, which are linear in
// the coefficients: ȳ (the intercept's posterior mean at the predictors'
// means, in every model) plus Σ_j E[β_j](x_j − x̄_j).
func exactAnswer(t *testing.T, X *mat.Dense, y []float64, Xnew *mat.Dense) (mean, ifIn, pred []float64) {
	t.Helper()
	ev, err := glmselect.NewEvidence(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := ev.Enumerate(context.Background(), 64)
	if err != nil {
		t.Fatal(err)
	}
	_, p := X.Dims()
	m, _ := Xnew.Dims()
	mean, ifIn, pred = ex.Mean, make([]float64, p), make([]float64, m)
	ybar := stat.Mean(y, nil)
	for i := range m {
		pred[i] = ybar
		for j := range p {
			pred[i] += mean[j] * (Xnew.At(i, j) - stat.Mean(mat.Col(nil, j, X), nil))
		}
	}
	for j := range p {
		ifIn[j] = mean[j] / ex.PIP[j]
	}
	return mean, ifIn, pred
}

// answerSpace is the Gaussian space of answerData predicting at its new
// rows.
func answerSpace(t *testing.T) (*ppl.SelectionSpace, []float64, []float64, []float64) {
	t.Helper()
	X, y, Xnew := answerData()
	mean, ifIn, pred := exactAnswer(t, X, y, Xnew)
	sp, err := glmselect.Gaussian(X, y, &glmselect.Settings{Predict: Xnew})
	if err != nil {
		t.Fatal(err)
	}
	return sp, mean, ifIn, pred
}

// TestAnswerExact checks the model-averaged coefficients (E[β],
// E[β | in]) and predictions of a sampled run against the exact
// enumeration of the 64 models: each within 4 MCSE.
func TestAnswerExact(t *testing.T) {
	sp, mean, ifIn, pred := answerSpace(t)
	res, err := Run(context.Background(), sp, &Settings{Seed: 3, Steps: 6000, Warmup: 500})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	check := func(what string, got, mcse, want float64) {
		t.Helper()
		z := (got - want) / mcse
		t.Logf("%s: %.5f ± %.5f, exact %.5f, z %.2f", what, got, mcse, want, z)
		if !(math.Abs(z) <= 4) {
			t.Errorf("%s: %.5f ± %.5f (MCSE), exact %.5f: z = %.2f", what, got, mcse, want, z)
		}
	}
	for j, c := range res.Coefficients {
		check(c.Name+" mean", float64(c.Mean), float64(c.MeanMCSE), mean[j])
		check(c.Name+" mean|in", float64(c.MeanIfIncluded), float64(c.MeanIfIncludedMCSE), ifIn[j])
		if !(c.PPositive >= 0 && c.PPositive <= 1 && c.SD > 0) {
			t.Errorf("%s: P(β>0|in) %v, sd %v", c.Name, c.PPositive, c.SD)
		}
	}
	if len(res.Quantities) != len(pred) {
		t.Fatalf("%d quantities, want %d", len(res.Quantities), len(pred))
	}
	for i, q := range res.Quantities {
		check(q.Name, float64(q.Mean), float64(q.MeanMCSE), pred[i])
		if !(q.Lower < q.Mean && q.Mean < q.Upper) {
			t.Errorf("%s: interval [%v, %v] does not hold the mean %v", q.Name, q.Lower, q.Upper, q.Mean)
		}
	}
}

// TestAnswerMCSECalibrated runs the p = 6 problem at 20 seeds: the
// z-scores of the coefficient means and predictions against the exact
// answer must have standard deviation near 1 (the MCSEs are neither too
// small nor too large).
func TestAnswerMCSECalibrated(t *testing.T) {
	if testing.Short() {
		t.Skip("20 runs: skipped under -short")
	}
	sp, mean, _, pred := answerSpace(t)
	var zs []float64
	for seed := range uint64(20) {
		res, err := Run(context.Background(), sp, &Settings{Seed: 100 + seed, Steps: 1500, Warmup: 200})
		if err != nil {
			t.Fatal(err)
		}
		for j, c := range res.Coefficients {
			zs = append(zs, (float64(c.Mean)-mean[j])/float64(c.MeanMCSE))
		}
		for i, q := range res.Quantities {
			zs = append(zs, (float64(q.Mean)-pred[i])/float64(q.MeanMCSE))
		}
	}
	m, sd := stat.MeanStdDev(zs, nil)
	t.Logf("%d z-scores: mean %.3f, sd %.3f", len(zs), m, sd)
	if !(sd >= 0.6 && sd <= 1.5) || math.Abs(m) > 0.5 {
		t.Errorf("z-scores of the means: mean %.3f, sd %.3f; want sd in [0.6, 1.5] and |mean| ≤ 0.5", m, sd)
	}
}

// TestAnswerMergeExact: the shards of a run merge into the coefficients,
// standard deviations, conditional estimates and quantiles of the whole
// run, to rounding.
func TestAnswerMergeExact(t *testing.T) {
	sp, _, _, _ := answerSpace(t)
	s := Settings{Seed: 5, Chains: 3, Steps: 700, Warmup: 100}
	whole := shardOf(t, sp, s)
	a, b := shardOf(t, sp, s, 0, 2), shardOf(t, sp, s, 1)
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if !(math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("%s: merged %v, whole run %v", what, got, want)
		}
	}
	for j, c := range m.Coefficients {
		w := whole.Coefficients[j]
		near(c.Name+" mean", float64(c.Mean), float64(w.Mean))
		near(c.Name+" sd", float64(c.SD), float64(w.SD))
		near(c.Name+" p_positive", float64(c.PPositive), float64(w.PPositive))
		near(c.Name+" mean_if_included", float64(c.MeanIfIncluded), float64(w.MeanIfIncluded))
		if c.Included != w.Included || !(c.MeanMCSE > 0) {
			t.Errorf("%s: included %d (whole %d), MCSE %v", c.Name, c.Included, w.Included, c.MeanMCSE)
		}
	}
	if len(m.Quantities) != len(whole.Quantities) {
		t.Fatalf("%d merged quantities, %d in the whole run", len(m.Quantities), len(whole.Quantities))
	}
	for i, q := range m.Quantities {
		w := whole.Quantities[i]
		near(q.Name+" mean", float64(q.Mean), float64(w.Mean))
		near(q.Name+" sd", float64(q.SD), float64(w.SD))
		near(q.Name+" 2.5%", float64(q.Lower), float64(w.Lower))
		near(q.Name+" 97.5%", float64(q.Upper), float64(w.Upper))
		if len(q.Thinned) != len(w.Thinned) {
			t.Errorf("%s: %d thinned values merged, %d in the whole run", q.Name, len(q.Thinned), len(w.Thinned))
		}
	}
}

// TestAnswerJSON: the coefficients and quantities are written with
// snake_case keys, read back the same, and a non-finite value (a term
// never included has NaN conditional estimates) survives the round trip.
func TestAnswerJSON(t *testing.T) {
	sp, _, _, _ := answerSpace(t)
	r, err := Run(context.Background(), sp, &Settings{Seed: 2, Chains: 2, Steps: 300, Warmup: 50})
	if err != nil {
		t.Fatal(err)
	}
	r.Coefficients[0].MeanIfIncluded = nan
	r.Coefficients[1].MeanRhat = pipeline.Float(math.Inf(1))
	b := checks.SnakeCaseJSON(t, r.WriteJSON, map[string]bool{"settings": true})
	for _, k := range []string{`"coefficients"`, `"mean_mcse"`, `"p_positive"`, `"mean_if_included"`, `"quantities"`, `"lower"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("the JSON has no %s", k)
		}
	}
	back, err := ReadResult(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(float64(back.Coefficients[0].MeanIfIncluded)) || !math.IsInf(float64(back.Coefficients[1].MeanRhat), 1) {
		t.Errorf("non-finite values read back as %v, %v", back.Coefficients[0].MeanIfIncluded, back.Coefficients[1].MeanRhat)
	}
	if back.Coefficients[2] != r.Coefficients[2] || back.Quantities[1].Mean != r.Quantities[1].Mean || len(back.Quantities[1].Thinned) != len(r.Quantities[1].Thinned) {
		t.Errorf("read back %+v, wrote %+v", back.Coefficients[2], r.Coefficients[2])
	}
}

// TestAnswerWarnsRunLonger: chains started in different models with very
// few steps disagree (R̂ > 1.05): the table ends with the run-longer
// warning naming the terms, the JSON carries it, and Run succeeds.
func TestAnswerWarnsRunLonger(t *testing.T) {
	sp, _, _, _ := answerSpace(t)
	full, _ := ppl.NewTerms(6, 0, 1, 2, 3, 4, 5)
	r, err := Run(context.Background(), sp, &Settings{Seed: 4, Chains: 4, Steps: 30, Warmup: -1, Start: &full})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "run longer (-steps)") {
		t.Fatalf("warnings %q, want the run-longer warning", r.Warnings)
	}
	if tab := r.String(); !strings.Contains(tab, "Warning: ") || !strings.Contains(tab, r.Warnings[0]) {
		t.Errorf("the table does not end with the warning:\n%s", tab)
	}
	var j bytes.Buffer
	if err := r.WriteJSON(&j); err != nil || !strings.Contains(j.String(), `"warnings"`) {
		t.Errorf("JSON without warnings (%v)", err)
	}
	long, err := Run(context.Background(), sp, &Settings{Seed: 4, Steps: 6000, Warmup: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(long.Warnings) != 0 {
		t.Errorf("a long run warns: %q", long.Warnings)
	}
}

// termColumn reads a chain file of Settings.DrawsDir and returns, for
// each row, whether term is in its model: from chain_model__ and the
// "# model N: terms" lines that define the numbers.
func termColumn(t *testing.T, path, term string) []float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	has := map[int]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "# model ")
		if !ok {
			continue
		}
		num, terms, ok := strings.Cut(rest, ": ")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			t.Fatalf("%s: bad model line %q", path, line)
		}
		if _, dup := has[n]; dup {
			t.Fatalf("%s: model %d defined twice", path, n)
		}
		has[n] = slices.Contains(strings.Split(terms, ","), term)
	}
	d, _, err := draws.ReadCSV(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(d.Layout().Diagnostics, "chain_model__")
	if col < 0 {
		t.Fatalf("%s: no chain_model__ column in %v", path, d.Layout().Diagnostics)
	}
	out := make([]float64, d.Len(0))
	for i := range out {
		id := int(d.Diagnostics(0, i)[col])
		in, ok := has[id]
		if !ok {
			t.Fatalf("%s: row %d in model %d, never defined", path, i, id)
		}
		out[i] = b2f(in)
	}
	return out
}
