package selection

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
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

// selectData returns n rows of p predictors, every third one correlated
// with a common factor, and a response with strong, weak and null effects.
func selectData(n, p int, seed uint64) (*mat.Dense, []float64) {
	effects := []float64{1.0, 0, 0.5, 0, -0.3, 0.2, 0, 0, 0.15, 0, 0, -0.6}
	return checks.Regression{Stream: 11, Group: 0, Common: 0.7, Own: 0.7, Intercept: 0.5,
		Effect: func(j int) float64 { return effects[j%len(effects)] }}.Data(n, p, seed)
}

// nigSettings are the normal-inverse-gamma prior of the tests written
// before the g-prior became the default, whose numbers they keep.
var nigSettings = &glmselect.Settings{Prior: glmselect.NormalInverseGamma{}}

func exactPIPs(t *testing.T, X *mat.Dense, y []float64) []float64 {
	t.Helper()
	nig, err := glmselect.NewEvidence(X, y, nigSettings)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := nig.Enumerate(context.Background(), 5)
	if err != nil {
		t.Fatal(err)
	}
	return ex.PIP
}

// exactNIGSpace is the Gaussian selection space of TestSelectExactNIG's
// data, 80 rows of 12 terms, and its exact PIPs.
func exactNIGSpace(t *testing.T) (*ppl.SelectionSpace, []float64) {
	t.Helper()
	X, y := selectData(80, 12, 1)
	want := exactPIPs(t, X, y)
	sp, err := glmselect.Gaussian(X, y, nigSettings)
	if err != nil {
		t.Fatal(err)
	}
	return sp, want
}

// TestSelectExactNIG is the exact test: a normal-inverse-gamma
// regression over 12 terms (4,096 models) sampled through the
// transdimensional machinery, every PIP within 4 MCSE of the enumerated
// closed form.
func TestSelectExactNIG(t *testing.T) {
	sp, want := exactNIGSpace(t)
	res, err := Run(context.Background(), sp, &Settings{Seed: 1, Steps: 5000, Warmup: 500})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	for j, e := range res.PIP {
		z := (e.P - want[j]) / e.MCSE
		t.Logf("%s: PIP %.4f ± %.4f, exact %.4f, z %.2f", res.Names[j], e.P, e.MCSE, want[j], z)
		if !e.Mixed {
			if math.Abs(e.P-want[j]) > 1e-3 {
				t.Errorf("%s: constant PIP %v, exact %.5f", res.Names[j], e.P, want[j])
			}
			continue
		}
		if math.Abs(z) > 4 {
			t.Errorf("%s: PIP %.4f ± %.4f, exact %.4f (z = %.2f)", res.Names[j], e.P, e.MCSE, want[j], z)
		}
	}
}

// TestSelectCalibration checks the reported MCSEs over seeds: the
// z-scores (PIP − exact)/MCSE of the terms with exact PIP in (0.02, 0.98)
// over 10 seeds have a standard deviation in [0.7, 1.4].
func TestSelectCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical test over 10 seeds")
	}
	sp, want := exactNIGSpace(t)
	var zs []float64
	for seed := uint64(101); seed < 111; seed++ {
		res, err := Run(context.Background(), sp, &Settings{Seed: seed, Steps: 3000, Warmup: 300})
		if err != nil {
			t.Fatal(err)
		}
		for j, e := range res.PIP {
			if want[j] > 0.02 && want[j] < 0.98 {
				zs = append(zs, (e.P-want[j])/e.MCSE)
			}
		}
	}
	m, sd := stat.MeanStdDev(zs, nil)
	t.Logf("%d z-scores: mean %.3f, sd %.3f", len(zs), m, sd)
	if sd < 0.7 || sd > 1.4 {
		t.Errorf("sd of the z-scores %.3f, want in [0.7, 1.4]", sd)
	}
}

func TestSelectLogisticPoissonRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 1))
	n, p := 200, 15
	X := mat.NewDense(n, p, nil)
	yb := make([]float64, n)
	yc := make([]float64, n)
	for i := range n {
		for j := range p {
			X.Set(i, j, rng.NormFloat64())
		}
		eta := -0.3 + 1.5*X.At(i, 0) - 1.0*X.At(i, 4)
		if rng.Float64() < 1/(1+math.Exp(-eta)) {
			yb[i] = 1
		}
		lam := math.Exp(0.5 + 0.6*X.At(i, 0) - 0.4*X.At(i, 4))
		for s := rng.ExpFloat64(); s < lam; s += rng.ExpFloat64() {
			yc[i]++
		}
	}
	for name, mk := range map[string]func() (*ppl.SelectionSpace, error){
		"logistic": func() (*ppl.SelectionSpace, error) { return glmselect.Logistic(X, yb, nil) },
		"poisson":  func() (*ppl.SelectionSpace, error) { return glmselect.Poisson(X, yc, nil) },
	} {
		sp, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), sp, &Settings{Seed: 3, Chains: 2, Steps: 1500, Warmup: 200})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Flagged > 0 {
			t.Errorf("%s: %d Laplace fits flagged", name, res.Flagged)
		}
		if res.PIP[0].P < 0.9 || res.PIP[4].P < 0.9 {
			t.Errorf("%s: PIPs of the true effects %.3f, %.3f", name, res.PIP[0].P, res.PIP[4].P)
		}
		for _, m := range res.Moves {
			if m.Proposed > 0 && m.Accepted == 0 {
				t.Errorf("%s: no %s accepted of %d", name, m.Move, m.Proposed)
			}
		}
	}
}

func TestSelectDeterministicOutputs(t *testing.T) {
	X, y := selectData(60, 8, 4)
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &Settings{Seed: 9, Chains: 3, Steps: 400, Warmup: 50, DrawsDir: dir}
	var calls int
	s.Progress = func(pipeline.Progress) { calls++ }
	prev := runtime.GOMAXPROCS(1)
	a, err := Run(context.Background(), sp, s)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	s.Progress, s.DrawsDir = nil, ""
	b, err := Run(context.Background(), sp, s)
	if err != nil {
		t.Fatal(err)
	}
	for j := range a.PIP {
		if a.PIP[j] != b.PIP[j] {
			t.Errorf("PIP %d differs between GOMAXPROCS 1 and %d: %+v, %+v", j, prev, a.PIP[j], b.PIP[j])
		}
	}
	if calls < 3*100 {
		t.Errorf("%d progress calls", calls)
	}
	// Shards: chain 1 alone gives chain 1's draws.
	s.Shard = []int{1}
	c, err := Run(context.Background(), sp, s)
	if err != nil || c.Steps != 400 || len(c.Chains) != 1 {
		t.Fatalf("shard: %v, %d steps", err, c.Steps)
	}
	// Merging the shards {0, 2} and {1} gives the pooled PIPs.
	s.Shard = []int{0, 2}
	c02, err := Run(context.Background(), sp, s)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(c02, c)
	if err != nil {
		t.Fatal(err)
	}
	for j := range m.PIP {
		if math.Abs(m.PIP[j].P-a.PIP[j].P) > 1e-12 {
			t.Errorf("merged PIP %d: %v, whole run %v", j, m.PIP[j].P, a.PIP[j].P)
		}
	}
	if _, err := Merge(c, c); err == nil {
		t.Error("merging a shard with itself: no error")
	}
	// CmdStan CSV: one file per chain, its model numbers matching the
	// chain's models.
	d, _, err := draws.ReadFiles(filepath.Join(dir, "select-0.csv"), filepath.Join(dir, "select-1.csv"), filepath.Join(dir, "select-2.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Chains() != 3 || d.Len(0) != 400 {
		t.Fatalf("draws: %d chains × %d", d.Chains(), d.Len(0))
	}
	var sum float64
	for ch := range 3 {
		for _, v := range termColumn(t, filepath.Join(dir, fmt.Sprintf("select-%d.csv", ch)), "x1") {
			sum += v
		}
	}
	if got := sum / 1200; math.Abs(got-a.VisitFrequencies()[0].P) > 1e-12 {
		t.Errorf("mean of x1's indicator from the files %v, PIP %v", got, a.VisitFrequencies()[0].P)
	}
	if err := a.WriteRunningFigure(filepath.Join(dir, "running.png")); err != nil {
		t.Errorf("running figure: %v", err)
	}
	var buf bytes.Buffer
	if err := a.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 20000 {
		t.Errorf("JSON of %d bytes", buf.Len())
	}
	back, err := ReadResult(&buf)
	if err != nil || back.PIP[3] != a.PIP[3] || !back.Top[0].Terms.Equal(a.Top[0].Terms) {
		t.Errorf("JSON round trip: %v", err)
	}
	if s := a.String(); !strings.Contains(s, "Posterior inclusion probabilities") || !strings.Contains(s, "Top") {
		t.Errorf("table:\n%s", s)
	}
}

func TestSelectBadInput(t *testing.T) {
	X, y := selectData(30, 4, 2)
	sp, _ := glmselect.Gaussian(X, y, nil)
	wrong, _ := ppl.NewTerms(5, 1)
	for name, s := range map[string]*Settings{
		"negative steps": {Steps: -1},
		"shard":          {Chains: 2, Shard: []int{2}},
		"start":          {Start: &wrong},
		"proposal":       {Proposal: nilProposal{}},
	} {
		if _, err := Run(context.Background(), sp, s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Run(context.Background(), nil, nil); err == nil {
		t.Error("nil space: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err := Run(ctx, sp, &Settings{Chains: 1, Steps: 5000, Progress: func(pipeline.Progress) {
		if n++; n == 30 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || res == nil || res.Steps == 0 {
		t.Errorf("cancelled: %v, result %v", err, res)
	}
}

// nilProposal is a family that prepares nothing.
type nilProposal struct{}

func (nilProposal) String() string { return "nil" }
func (nilProposal) Prepare(context.Context, *Preparation) (Proposer, error) {
	return nil, nil
}

func TestParseSelectProposal(t *testing.T) {
	for _, p := range Proposals() {
		got, err := ParseProposal(p.String())
		if err != nil || got.String() != p.String() || reflect.TypeOf(got) != reflect.TypeOf(p) {
			t.Errorf("%s: got %v, %v", p, got, err)
		}
	}
	if _, ok := Proposals()[0].(FullConditional); !ok {
		t.Errorf("the first family is %v, want the default fullcond", Proposals()[0])
	}
	if _, err := ParseProposal("laplce"); err == nil || !strings.Contains(err.Error(), "laplace") {
		t.Errorf("unknown name: %v", err)
	}
}
