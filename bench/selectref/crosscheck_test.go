package main

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/ppl"
)

// TestDefaultsAreTrj checks that the references use trj's default priors.
func TestDefaultsAreTrj(t *testing.T) {
	if DefaultNIG != (NIGPrior{G: glmselect.DefaultG, A: glmselect.DefaultA, B: glmselect.DefaultB}) {
		t.Errorf("DefaultNIG %+v, glmselect's defaults G %v A %v B %v", DefaultNIG, glmselect.DefaultG, glmselect.DefaultA, glmselect.DefaultB)
	}
	if DefaultLogit != (LogitPrior{S0: glmselect.DefaultInterceptSD, S: glmselect.DefaultPriorSD}) {
		t.Errorf("DefaultLogit %+v, glmselect's defaults %v %v", DefaultLogit, glmselect.DefaultInterceptSD, glmselect.DefaultPriorSD)
	}
}

func matrixOf(d dataset) *mat.Dense {
	n, p := len(d.y), len(d.x[0])
	m := mat.NewDense(n, p, nil)
	for i := range n {
		m.SetRow(i, d.x[i])
	}
	return m
}

// TestNIGAgreesWithGlmselect compares this program's closed form, written
// independently, with glmselect.Evidence under NormalInverseGamma on random models of the p = 20 set.
func TestNIGAgreesWithGlmselect(t *testing.T) {
	d := linearData()
	nig, err := glmselect.NewEvidence(matrixOf(d), d.y, &glmselect.Settings{Prior: glmselect.NormalInverseGamma{}})
	if err != nil {
		t.Fatal(err)
	}
	ds := standardise(d)
	gr := newGram(ds)
	buf, v := newBuf(ds.p + 1)
	r := rand.New(rand.NewPCG(9, 10))
	for range 200 {
		var idx []int
		cols := []int{0}
		for j := range ds.p {
			if r.IntN(3) == 0 {
				idx = append(idx, j)
				cols = append(cols, j+1)
			}
		}
		tm, err := ppl.NewTerms(ds.p, idx...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := nig.LogEvidence(tm)
		if err != nil {
			t.Fatal(err)
		}
		if got := nigLogEvidence(gr, ds.n, DefaultNIG, cols, buf, v); math.Abs(got-want) > 1e-8*math.Max(1, math.Abs(want)) {
			t.Errorf("model %v: %.12g here, glmselect %.12g", idx, got, want)
		}
	}
}

// TestStoredNIGReference checks the stored exact PIPs of the p = 20 set
// against glmselect's own enumeration (a second, independent
// implementation) at full size: 2^20 models, a few seconds.
func TestStoredNIGReference(t *testing.T) {
	if testing.Short() {
		t.Skip("enumerates 2^20 models")
	}
	var ref Reference
	b, err := datasets.ReadFile("select/" + LinearNIGRef)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	d := linearData()
	nig, err := glmselect.NewEvidence(matrixOf(d), d.y, &glmselect.Settings{Prior: glmselect.NormalInverseGamma{}})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := nig.Enumerate(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for j, p := range ex.PIP {
		if math.Abs(p-ref.PIP[j]) > 1e-9 {
			t.Errorf("PIP of x%d: stored %.12f, glmselect %.12f", j+1, ref.PIP[j], p)
		}
	}
}

// TestStoredGPriorReference checks the stored exact PIPs of the p = 20 set
// under the g-prior as BMS uses it (this program's own closed form) against
// glmselect's enumeration under its default prior, the same g-prior: 2^20
// models, a few seconds.
func TestStoredGPriorReference(t *testing.T) {
	if testing.Short() {
		t.Skip("enumerates 2^20 models")
	}
	var ref Reference
	b, err := datasets.ReadFile("select/" + LinearGPriorRef)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	d := linearData()
	e, err := glmselect.NewEvidence(matrixOf(d), d.y, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := e.Enumerate(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for j, p := range ex.PIP {
		if math.Abs(p-ref.PIP[j]) > 1e-9 {
			t.Errorf("PIP of x%d: stored %.12f, glmselect %.12f", j+1, ref.PIP[j], p)
		}
	}
}

// TestRealReferencesAreTrjDefaults checks that the real data sets'
// references use trj's defaults: the UScrime enumeration (this program's
// own closed forms) against glmselect's default Evidence enumeration,
// PIPs and coefficient moments; Pima's prior against glmselect's logistic
// defaults.
func TestRealReferencesAreTrjDefaults(t *testing.T) {
	d, _, err := realData(UScrimeFile)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := uscrimeReference()
	if err != nil {
		t.Fatal(err)
	}
	e, err := glmselect.NewEvidence(matrixOf(d), d.y, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := e.Enumerate(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for j := range ex.PIP {
		if math.Abs(ex.PIP[j]-ref.PIP[j]) > 1e-9 || math.Abs(ex.Mean[j]-ref.CoefMean[j]) > 1e-9*math.Max(1, math.Abs(ref.CoefMean[j])) || math.Abs(ex.SD[j]-ref.CoefSD[j]) > 1e-9*math.Max(1, ref.CoefSD[j]) {
			t.Errorf("%s: here (%.10f, %.10f, %.10f), glmselect (%.10f, %.10f, %.10f)", ref.Names[j], ref.PIP[j], ref.CoefMean[j], ref.CoefSD[j], ex.PIP[j], ex.Mean[j], ex.SD[j])
		}
	}
	if pr := pimaPrior([]float64{0, 1, 1}); pr.S0 != glmselect.DefaultInterceptSD || pr.S != glmselect.DefaultPriorSD {
		t.Errorf("Pima prior %+v, glmselect's defaults %v %v", pr, glmselect.DefaultInterceptSD, glmselect.DefaultPriorSD)
	}
}
