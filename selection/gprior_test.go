package selection

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/ppl"
)

// checkPIPs fails when a PIP of res is more than 4 standard errors from
// want: the run's MCSE combined with the reference's own (refSE, 0 for an
// exact reference); a term the chains never moved must be within 0.01.
func checkPIPs(t *testing.T, res *Result, want, refSE []float64) {
	t.Helper()
	for j, e := range res.PIP {
		if !e.Mixed {
			if math.Abs(e.P-want[j]) > 0.01 {
				t.Errorf("%s: PIP %v in every step, reference %.4f", res.Names[j], e.P, want[j])
			}
			continue
		}
		se := math.Hypot(e.MCSE, refSE[j])
		if z := (e.P - want[j]) / se; math.Abs(z) > 4 {
			t.Errorf("%s: PIP %.4f ± %.4f, reference %.4f ± %.4f: z = %.2f", res.Names[j], e.P, e.MCSE, want[j], refSE[j], z)
		}
	}
}

// TestSelectUScrimeDefaults runs selection.Run with its defaults (but a
// shorter run) on UScrime under glmselect's default prior, the
// unit-information g-prior, and checks every PIP against the enumeration
// within 4 MCSE (the issue: the default prior must find what BMS finds).
func TestSelectUScrimeDefaults(t *testing.T) {
	b, err := datasets.ReadFile("select/uscrime.csv")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := datasets.ReadCSV(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	n, p := len(tab.Rows), len(tab.Header)-1
	X := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i, row := range tab.Rows {
		for j, s := range row {
			v, _ := strconv.ParseFloat(s, 64)
			if j == 0 {
				y[i] = v
			} else {
				X.Set(i, j-1, v)
			}
		}
	}
	set := &glmselect.Settings{Names: tab.Header[1:]}
	e, err := glmselect.NewEvidence(X, y, set)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := e.Enumerate(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := glmselect.Gaussian(X, y, set)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sp, &Settings{Seed: 3, Steps: 4000})
	if err != nil {
		t.Fatal(err)
	}
	checkPIPs(t, res, ex.PIP, make([]float64, p))
}

// mc3 is a reference sampler of the posterior over models from closed-form
// evidences (MC3: flip one term, or swap an included and an excluded one,
// accepted by the ratio of prior × evidence): PIPs and their standard
// errors by batch means over 50 batches.
func mc3(e *glmselect.Evidence, q ppl.ModelPrior, steps int, seed uint64) (pip, se []float64) {
	p := e.P()
	rng := rand.New(rand.NewPCG(seed, 1))
	cache := map[string]float64{}
	logPost := func(t ppl.Terms) float64 {
		k := t.Key()
		if v, ok := cache[k]; ok {
			return v
		}
		le, err := e.LogEvidence(t)
		if err != nil {
			panic(err)
		}
		v := q.LogModelPrior(t) + le
		cache[k] = v
		return v
	}
	cur, _ := ppl.NewTerms(p)
	lc := logPost(cur)
	const batches = 50
	sums := make([][]float64, batches)
	for i := range sums {
		sums[i] = make([]float64, p)
	}
	per := steps / batches
	for s := range per * batches {
		var next ppl.Terms
		k := cur.Count()
		if rng.IntN(2) == 0 && k > 0 && k < p {
			in := cur.Indices()
			out := in[rng.IntN(k)]
			j := rng.IntN(p)
			for cur.Has(j) {
				j = rng.IntN(p)
			}
			next = cur.Without(out).With(j)
		} else {
			j := rng.IntN(p)
			if cur.Has(j) {
				next = cur.Without(j)
			} else {
				next = cur.With(j)
			}
		}
		if ln := logPost(next); math.Log(rng.Float64()) < ln-lc {
			cur, lc = next, ln
		}
		for _, j := range cur.Indices() {
			sums[s/per][j]++
		}
	}
	pip, se = make([]float64, p), make([]float64, p)
	for j := range p {
		var m, m2 float64
		for b := range batches {
			v := sums[b][j] / float64(per)
			m += v / batches
			m2 += v * v / batches
		}
		pip[j] = m
		se[j] = math.Sqrt(math.Max(0, m2-m*m) / (batches - 1))
	}
	return pip, se
}

// TestSelectGPriorMoreTermsThanData runs selection.Run's defaults where
// p ≥ n (n = 30, p = 40): the g-prior gives models of more than n − 2 = 28
// terms no mass, the full model has none, and FullConditional fits its
// proposal on the ridge-regularised full model. Every PIP must be within 4
// standard errors of a long MC3 on the closed-form evidences.
func TestSelectGPriorMoreTermsThanData(t *testing.T) {
	if testing.Short() && selectRace {
		t.Skip("a long reference chain; the first pass runs it")
	}
	effects := []float64{2, -1.5, 1}
	X, y := checks.Regression{Stream: 21, Group: 0, Common: 0.5, Own: 0.8, Intercept: 3,
		Effect: func(j int) float64 {
			if j < len(effects) {
				return effects[j]
			}
			return 0
		}}.Data(30, 40, 2)
	e, err := glmselect.NewEvidence(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := e.Support(); s.MaxTerms != 28 || !s.Limited() {
		t.Fatalf("support %v", s)
	}
	want, se := mc3(e, ppl.BetaBinomial{A: 1, B: 1}, 400000, 7)
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sp, &Settings{Seed: 5, Steps: 4000})
	if err != nil {
		t.Fatal(err)
	}
	checkPIPs(t, res, want, se)
}
