package selection

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"regexp"
	"testing"

	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/pipeline"
)

// snakeKey is what every JSON key trj writes looks like.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// checkSnakeKeys reports every key of the JSON value v, at any depth,
// that is not snake_case; the keys of "settings" (setting paths such as
// Kernel.SwapProb) are data.
func checkSnakeKeys(t *testing.T, v any, path string) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !snakeKey.MatchString(k) {
				t.Errorf("key %q at %s is not snake_case", k, path)
			}
			if k == "settings" {
				continue
			}
			checkSnakeKeys(t, e, path+"."+k)
		}
	case []any:
		for _, e := range x {
			checkSnakeKeys(t, e, path+"[]")
		}
	}
}

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
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	checkSnakeKeys(t, v, "$")
	if len(r.Top) == 0 {
		t.Fatal("no top models")
	}
}

// TestModelJSONNonFinite: a top model whose renormalised probability is
// NaN (a log evidence of +Inf) is written and reads back.
func TestModelJSONNonFinite(t *testing.T) {
	in := Model{Indices: []int{0, 2}, Label: "a,c", Estimate: pipeline.Estimate{P: 0.5, Rhat: math.Inf(1)},
		LogEvidence: pipeline.Float(math.Inf(1)), Renormalised: math.NaN()}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("a NaN fails the write: %v", err)
	}
	var out Model
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(out.Renormalised) || !math.IsInf(float64(out.LogEvidence), 1) || out.Label != "a,c" || len(out.Indices) != 2 || !math.IsInf(out.Estimate.Rhat, 1) {
		t.Errorf("wrote %s, read %+v", b, out)
	}
}
