package trj_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// TestReadResultBadInput: ReadResult refuses what is not exactly one
// result.
func TestReadResultBadInput(t *testing.T) {
	one := `{"Labels": ["a", "b"], "Fingerprint": "f"}`
	if _, err := trj.ReadResult(strings.NewReader(one + "\n")); err != nil {
		t.Fatalf("one result: %v", err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "reading a result"},
		{"no fingerprint", `{"Labels": ["a"]}`, "not a trj result"},
		{"second result appended", one + "\n" + one, "data after the result"},
		{"trailing garbage", one + " x", "after the result"},
		{"trailing bracket", one + "]", "after the result"},
	} {
		_, err := trj.ReadResult(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	var buf bytes.Buffer
	if err := (&trj.Result{Labels: []string{"a"}, Fingerprint: "f"}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := trj.ReadResult(&buf); err != nil {
		t.Errorf("WriteJSON's output: %v", err)
	}
}

// TestResultAccessorsOnPartialResults: every accessor of a result whose
// stages failed or are missing (a zero Result, one with models only, one
// read from a file with short lists, a nil one) answers without a panic,
// and Merge refuses chains whose counts do not fit the models.
func TestResultAccessorsOnPartialResults(t *testing.T) {
	partial := []*trj.Result{
		nil,
		{},
		{Labels: []string{"a", "b"}},
		{Labels: []string{"a", "b"}, Dims: []int{1}, BridgeError: "failed", Transports: []trj.TransportReport{{Kind: "affine"}}},
		{Labels: []string{"a", "b"}, Bridge: &trj.Bridge{Normalized: []float64{1}, Unreliable: true, MinFrom: 5, MinTo: -1}, Evidence: &trj.Evidence{P: []float64{1}}},
		{Labels: []string{"a", "b"}, Chain: []pipeline.Estimate{{P: 1}}, Jumps: []trj.JumpStat{{From: 0, To: 1, Proposed: 1}}},
	}
	for i, r := range partial {
		_ = r.String()
		var buf bytes.Buffer
		_ = r.WriteTable(&buf)
		_ = r.WriteJSON(&buf)
		r.Acceptance(0)
		r.Acceptance(7)
		if r != nil {
			r.Bridge.Reported()
			for _, c := range r.Chain {
				c.Interval(2)
			}
			if err := r.WriteRunningFigure(t.TempDir() + "/f.png"); err == nil && r.Chains == nil {
				t.Errorf("result %d: a figure without chains", i)
			}
		}
	}
	var b *trj.Bridge
	if p, se, bal := b.Reported(); p != nil || se != nil || bal {
		t.Error("nil bridge reports an estimate")
	}
	bad := &trj.Result{Labels: []string{"a", "b"}, Complete: true, Fingerprint: "f", Chains: &kernels.RJSampleResult{NumModels: 2,
		Chains: []kernels.RJChainResult{{Models: []int{0, 1}, Proposed: [][]int{{0}}, Accepted: [][]int{{0}}}}}}
	if _, err := trj.Merge(bad); err == nil || !strings.Contains(err.Error(), "jump counts") {
		t.Errorf("merging chains with short jump counts: err = %v", err)
	}
	bad.Chains.Chains[0] = kernels.RJChainResult{Models: []int{0, 2}, Proposed: [][]int{{0, 0}, {0, 0}}, Accepted: [][]int{{0, 0}, {0, 0}}}
	if _, err := trj.Merge(bad); err == nil || !strings.Contains(err.Error(), "in model 2") {
		t.Errorf("merging chains in model 2 of 2: err = %v", err)
	}
}

// TestMergeRefusesOtherRuns: shards of one run merge; a shard of a run
// whose given pilot draws differ in one value, or whose data differ, does
// not. A LoadedTransports value serves a second run too.
func TestMergeRefusesOtherRuns(t *testing.T) {
	g := newGaussModels(3, 0.3)
	space := g.space(t)
	settings := func(shard []int, given [][][][]float64) *trj.Settings {
		return &trj.Settings{
			Seed:      2,
			Pilot:     trj.PilotSettings{Method: trj.GivenPilots{Draws: given}},
			Proposals: &trj.AffineTransports{},
			Chains:    trj.ChainSettings{Chains: 2, Steps: 50, MaxSteps: 50, Within: trj.RandomWalkMove{}, Shard: shard},
		}
	}
	run := func(space *ppl.Space, s *trj.Settings) *trj.Result {
		t.Helper()
		res, err := trj.Run(context.Background(), space, s)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	given := g.draws(1, 4, 30)
	a := run(space, settings([]int{0}, given))
	if _, err := trj.Merge(a, run(space, settings([]int{1}, given))); err != nil {
		t.Fatalf("shards of one run: %v", err)
	}
	other := g.draws(1, 4, 30)
	other[2][3][7][0] += 1e-9
	if _, err := trj.Merge(a, run(space, settings([]int{1}, other))); err == nil || !strings.Contains(err.Error(), "different run") {
		t.Errorf("given draws differing in one value: err = %v", err)
	}
	if _, err := trj.Merge(a, run(newGaussModels(3, 0.31).space(t), settings([]int{1}, given))); err == nil || !strings.Contains(err.Error(), "different run") {
		t.Errorf("other data: err = %v", err)
	}

	_, fitted, err := trj.RunFitted(context.Background(), space, settings(nil, given))
	if err != nil {
		t.Fatal(err)
	}
	var set bytes.Buffer
	if err := fitted.Save(&set); err != nil {
		t.Fatal(err)
	}
	loaded := &trj.LoadedTransports{From: &set}
	s := settings(nil, given)
	s.Proposals = loaded
	first := run(space, s)
	second := run(space, s)
	if first.Fingerprint != second.Fingerprint || first.Bridge.Normalized[0] != second.Bridge.Normalized[0] {
		t.Errorf("a loaded set's second run: fingerprints %s and %s, bridge %v and %v", first.Fingerprint, second.Fingerprint, first.Bridge.Normalized, second.Bridge.Normalized)
	}
}
