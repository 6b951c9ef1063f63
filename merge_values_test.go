package trj_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/kernels"
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
		{Labels: []string{"a", "b"}, Chain: []trj.ChainEstimate{{P: 1}}, Jumps: []trj.JumpStat{{From: 0, To: 1, Proposed: 1}}},
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
