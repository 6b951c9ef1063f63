package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/shard"
)

// dataMaps are the keys of JSON objects whose own keys are data (model
// labels, proposal types, stage and transport names), not field names.
var dataMaps = map[string]bool{
	"runs": true, "bridge": true, "proposed": true, "proposals": true, "model_probabilities": true,
	"stderr": true, "mcse": true, "seconds": true, "truth": true, "tried": true, "running": true,
	"raw": true, "normalized": true, "prior": true, "settings": true,
}

// TestSASPartJSONNonFinite: the partial file of a "trj run sas" shard
// whose bridge estimate of an evaluation set is NaN (a failed set), whose
// run has an R̂ of +Inf and whose proposal type has no standard error is
// written, with snake_case keys, and its payload reads back (before,
// encoding/json refused the NaN and the shard wrote nothing).
func TestSASPartJSONNonFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	er := experiment.NewResult("sas", 1, []string{"1", "2"})
	er.Add("affine", &experiment.ProposalResult{
		ModelProbabilities: map[string]experiment.Float{"1": 0.5, "2": 0.5},
		Stderr:             map[string]experiment.Float{"1": experiment.Float(nan), "2": experiment.Float(nan)},
		Seconds:            map[string]experiment.Float{"chains": 1},
	})
	run := &trj.Result{Labels: []string{"1", "2"}, Prior: []float64{0.5, 0.5}, Fingerprint: "f",
		Chain:  []pipeline.Estimate{{P: 0.5, Rhat: inf, ESS: nan, Mixed: true}, {P: 0.5, Rhat: inf, Mixed: true}},
		Bridge: &trj.Bridge{Raw: []float64{nan, 1}, NormalizedSE: []float64{nan, nan}, MinAcceptESS: nan}}
	part := sasPart{Result: er, Order: []string{"affine"}, Runs: map[string]*trj.Result{"affine": run}, Truth: 0.5,
		Bridge: map[string][]float64{"affine": {0.4, nan}}, Source: [][]float64{{1, inf}},
		Proposed: map[string][][]float64{"affine": {{nan, 1}}}, Background: [][]float64{{1, 2}}}
	path := filepath.Join(t.TempDir(), "part.json")
	if _, err := writePartial(path, runKindSAS, map[string]any{"seed": 1}, shard.Shard{Index: 1, Count: 1}, []int{1}, 1, 0.5, part); err != nil {
		t.Fatalf("a non-finite value fails the shard's write: %v", err)
	}
	m, b := readJSONMap(t, path)
	checks.SnakeKeys(t, m, "$", dataMaps)
	p, err := readPartial(path)
	if err != nil {
		t.Fatal(err)
	}
	var back sasPart
	if err := json.Unmarshal(p.Payload, &back); err != nil {
		t.Fatal(err)
	}
	if back.Truth != 0.5 || !math.IsNaN(back.Bridge["affine"][1]) || !math.IsInf(back.Source[0][1], 1) || !math.IsNaN(back.Proposed["affine"][0][0]) ||
		back.Background[0][1] != 2 || !math.IsInf(back.Runs["affine"].Chain[0].Rhat, 1) || !math.IsNaN(back.Runs["affine"].Bridge.MinAcceptESS) ||
		!math.IsNaN(float64(back.Result.Proposals["affine"].Stderr["1"])) {
		t.Errorf("read back wrong from\n%s", b)
	}
}

// TestIsTRJResult: trj merge recognises a trj.Result in the snake_case
// layout (before, it looked for "Fingerprint" only) and in the layout
// written before.
func TestIsTRJResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&trj.Result{Labels: []string{"a"}, Fingerprint: "f"}).WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		doc  string
		want bool
	}{
		{string(b), true},
		{`{"Labels": ["a"], "Fingerprint": "f"}`, true},
		{`{"format": "trj-partial/1", "fingerprint": "f"}`, false},
		{`{"names": ["x1"], "fingerprint": "f", "pip": []}`, false},
		{`[1]`, false},
	} {
		if got := isTRJResult([]byte(c.doc)); got != c.want {
			t.Errorf("isTRJResult(%s) = %v, want %v", c.doc, got, c.want)
		}
	}
}
