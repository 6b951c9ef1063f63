package pipeline_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/trjgo/trj/pipeline"
)

// TestEstimateJSONNonFinite checks that an Estimate whose diagnostics are
// not finite (R̂ = +Inf for a term always in one chain and never in
// another, ESS NaN for chains too short) is written, with snake_case names,
// and reads back the same.
func TestEstimateJSONNonFinite(t *testing.T) {
	in := []pipeline.Estimate{
		{P: 0.5, MCSE: 0.35, Rhat: math.Inf(1), ESS: math.NaN(), Mixed: true, Steps: 8},
		{P: 0.25, MCSE: 0.01, Rhat: 1.002, ESS: 812.5, Mixed: true, Steps: 4000},
		{P: 1, Rhat: 1, Steps: 10},
		{P: 0.5, MCSE: math.Inf(1), Rhat: math.Inf(-1), ESS: 0, Mixed: true},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("a non-finite diagnostic fails the write: %v", err)
	}
	for _, key := range []string{`"p":`, `"mcse":`, `"rhat":"+Inf"`, `"ess":"NaN"`, `"mixed":`, `"steps":`, `"rhat":"-Inf"`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}
	var out []pipeline.Estimate
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		a, c := in[i], out[i]
		same := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
		if !same(a.P, c.P) || !same(a.MCSE, c.MCSE) || !same(a.Rhat, c.Rhat) || !same(a.ESS, c.ESS) || a.Mixed != c.Mixed || a.Steps != c.Steps {
			t.Errorf("estimate %d: wrote %+v, read %+v", i, a, c)
		}
	}
	var f pipeline.Float
	for _, bad := range []string{`"1.5"`, `"x"`, `true`} {
		if err := json.Unmarshal([]byte(bad), &f); err == nil {
			t.Errorf("Float read %s without an error", bad)
		}
	}
}

// TestEstimateMeanConstantChains checks the estimate of chains that each
// stay at a different value: mixed across chains though never within one,
// so R̂ is +Inf and the MCSE the spread of the chains' means, never 0.
func TestEstimateMeanConstantChains(t *testing.T) {
	x := [][]float64{make([]float64, 100), make([]float64, 100)}
	for i := range x[1] {
		x[1][i] = 1
	}
	e := pipeline.EstimateMean(x)
	if e.P != 0.5 || !e.Mixed || !math.IsInf(e.Rhat, 1) || !(e.MCSE >= 0.35) {
		t.Errorf("chains at 0 and 1: %+v, want P 0.5, mixed, R̂ +Inf, MCSE ≥ 0.35", e)
	}
	if _, err := json.Marshal(e); err != nil {
		t.Errorf("writing it: %v", err)
	}
	if e := pipeline.EstimateMean([][]float64{{1, 1, 1}, {1, 1}}); e.P != 1 || e.Mixed || e.MCSE != 0 || e.Steps != 5 {
		t.Errorf("constant chains: %+v, want P 1, not mixed, MCSE 0, 5 steps", e)
	}
	if e := pipeline.EstimateMean(nil); e.Steps != 0 || e.Mixed {
		t.Errorf("no chains: %+v", e)
	}
}
