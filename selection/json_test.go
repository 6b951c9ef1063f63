package selection

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/pipeline"
)

// TestResultJSONSnakeCase checks every key of a real selection result's
// JSON (before, Names, PIP and Top were written with Go's names).
func TestResultJSONSnakeCase(t *testing.T) {
	X, y := selectData(60, 8, 4)
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), sp, &Settings{Seed: 9, Chains: 2, Steps: 200, Warmup: 50})
	if err != nil {
		t.Fatal(err)
	}
	// the keys of "settings" (setting paths such as Kernel.SwapProb) are data
	checks.SnakeCaseJSON(t, r.WriteJSON, map[string]bool{"settings": true})
	if len(r.Top) == 0 {
		t.Fatal("no top models")
	}
}

// TestModelJSONNonFinite: a top model whose renormalised probability is
// NaN (a log evidence of +Inf) is written and reads back.
func TestModelJSONNonFinite(t *testing.T) {
	in := Model{Indices: []int{0, 2}, Label: "a,c", Estimate: pipeline.Estimate{P: 0.5, Rhat: math.Inf(1)},
		LogEvidence: pipeline.Float(math.Inf(1)), Renormalised: pipeline.Float(math.NaN())}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("a NaN fails the write: %v", err)
	}
	var out Model
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(float64(out.Renormalised)) || !math.IsInf(float64(out.LogEvidence), 1) || out.Label != "a,c" || len(out.Indices) != 2 || !math.IsInf(out.Estimate.Rhat, 1) {
		t.Errorf("wrote %s, read %+v", b, out)
	}
}
