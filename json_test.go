package trj_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
)

// TestResultJSONSnakeCase checks every key of the JSON of a real run with
// every stage (before, trj.Result was written with Go's field names).
func TestResultJSONSnakeCase(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	s := &trj.Settings{Seed: 5, Pilot: trj.PilotSettings{Method: trj.NUTSPilots{Warmup: 200, Draws: 400}},
		Chains: trj.ChainSettings{Chains: 2, Steps: 200, MaxSteps: 200}}
	res, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bridge == nil || res.ModelEvidence == nil || res.Chains == nil || len(res.Jumps) == 0 {
		t.Fatalf("a stage is missing: %s", res)
	}
	res.Evidence = &trj.Evidence{LogZ: []float64{-1}, LogZSE: []float64{0.1}, P: []float64{1}, SE: []float64{0}}
	res.Chains.Chains[0].Draws, res.Chains.Chains[0].Offsets = []float64{1}, []int{0, 1}
	b := checks.SnakeCaseJSON(t, res.WriteJSON, map[string]bool{"tried": true, "settings": true})
	for _, k := range []string{`"log_z_se"`, `"normalized_se"`, `"min_accept_ess"`, `"num_models"`, `"held_out_log_lik"`, `"draws"`} {
		if !bytes.Contains(b, []byte(k)) {
			t.Errorf("no key %s in the JSON", k)
		}
	}
}

// nonFiniteResult is a result holding NaN and ±Inf wherever a float can
// be, as a run whose diagnostics or estimates are not finite gives.
func nonFiniteResult() *trj.Result {
	nan, inf := math.NaN(), math.Inf(1)
	q := flows.Quality{HeldOutLogLik: -inf, HeldOutSE: nan, ESS: nan, ESSFraction: nan, Draws: 10}
	return &trj.Result{
		Labels: []string{"a", "b"}, Dims: []int{1, 2}, Prior: []float64{0.5, nan},
		Seed: 1, Pilot: "NUTS", Transport: "affine", Algorithm: "TRJ", Complete: true,
		Chain:     []pipeline.Estimate{{P: 0.5, MCSE: 0.35, Rhat: inf, ESS: nan, Mixed: true, Steps: 4}, {P: 0.5, Rhat: -inf}},
		NumChains: 2, Steps: 4,
		Bridge: &trj.Bridge{Raw: []float64{inf, 1}, Normalized: []float64{1, 0}, RawSE: []float64{nan, nan}, NormalizedSE: []float64{nan, 0},
			Groups: 5, Proposals: 3, AcceptESS: [][]float64{{0, inf}, {nan, 0}}, MinAcceptESS: nan, MinFrom: 1, MinTo: 0,
			Unreliable: true, Balance: []float64{nan, nan}, BalanceSE: []float64{inf, -inf}},
		Evidence:      &trj.Evidence{LogZ: []float64{-inf, 2}, LogZSE: []float64{nan, 0.1}, P: []float64{0, 1}, SE: []float64{nan, inf}},
		ModelEvidence: &trj.ModelEvidence{LogZ: []float64{inf, -inf}, LogZSE: []float64{nan, nan}, P: []float64{nan, nan}, SE: []float64{nan, 0}},
		Jumps:         []trj.JumpStat{{From: 0, To: 1, Proposed: 2, Accepted: 1}},
		Jump:          [][]float64{{0, 1}, {nan, inf}},
		Transports:    []trj.TransportReport{{Kind: "affine", Quality: q, Tried: map[string]flows.Quality{"RQMA": q}}, {Kind: "identity", Quality: q}},
		Timings:       []trj.StageTime{{Stage: "chains", Seconds: 1.5}},
		Chains: &kernels.RJSampleResult{NumModels: 2, Chains: []kernels.RJChainResult{
			{Chain: 0, Models: []int{0, 1}, Draws: []float64{nan, inf, -inf}, Offsets: []int{0, 1, 3},
				Proposed: [][]int{{0, 1}, {1, 0}}, Accepted: [][]int{{0, 1}, {0, 0}}}}},
		Fingerprint: "f",
	}
}

// TestResultJSONNonFinite: a result holding NaN and ±Inf (R̂ of chains
// stuck at different models, a log evidence of -Inf, a bridge SE of NaN…)
// is written and reads back the same (before, encoding/json refused it
// and -json wrote nothing).
func TestResultJSONNonFinite(t *testing.T) {
	in := nonFiniteResult()
	var buf bytes.Buffer
	if err := in.WriteJSON(&buf); err != nil {
		t.Fatalf("a non-finite value fails the write: %v", err)
	}
	first := buf.String()
	back, err := trj.ReadResult(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := back.WriteJSON(&again); err != nil {
		t.Fatal(err)
	}
	if again.String() != first {
		t.Errorf("written, read and written again:\n%s\nfirst:\n%s", again.String(), first)
	}
	if !math.IsInf(back.Chain[0].Rhat, 1) || !math.IsInf(back.Evidence.LogZ[0], -1) || !math.IsNaN(back.Bridge.NormalizedSE[0]) ||
		!math.IsNaN(back.Bridge.MinAcceptESS) || !math.IsInf(back.Bridge.AcceptESS[0][1], 1) || !math.IsNaN(back.Prior[1]) ||
		!math.IsInf(back.Jump[1][1], 1) || !math.IsInf(back.ModelEvidence.LogZ[1], -1) || !math.IsNaN(back.Transports[0].Quality.ESS) ||
		!math.IsInf(back.Transports[0].Tried["RQMA"].HeldOutLogLik, -1) || !math.IsInf(back.Chains.Chains[0].Draws[2], -1) ||
		back.Bridge.Groups != 5 || back.Bridge.MinFrom != 1 || back.Chains.NumModels != 2 {
		t.Errorf("read back wrong:\n%s", first)
	}
}

// TestReadResultBeforeSnakeCase reads a result written before trj's JSON
// keys were snake_case (a 2-chain SMC run of the eight-model space): the
// fields whose old names case-insensitive matching does not find
// (LogZSE, NumModels, HeldOutLogLik…) must be read, not dropped.
func TestReadResultBeforeSnakeCase(t *testing.T) {
	b, err := os.ReadFile("testdata/result_before_snake_case.json")
	if err != nil {
		t.Fatal(err)
	}
	var old struct {
		NumChains int
		Bridge    struct {
			NormalizedSE, BalanceSE []float64
			AcceptESS               [][]float64
			MinAcceptESS            float64
			MinFrom, MinTo          int
		}
		Evidence, ModelEvidence struct{ LogZ, LogZSE []float64 }
		Transports              []struct {
			Quality struct{ HeldOutLogLik, HeldOutSE, ESSFraction float64 }
		}
		Chains struct{ NumModels int }
	}
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	r, err := trj.ReadResult(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	eq := func(name string, got, want any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) || string(g) == "null" || string(g) == "0" {
			t.Errorf("%s: read %s, file holds %s", name, g, w)
		}
	}
	eq("NumChains", r.NumChains, old.NumChains)
	eq("Bridge.NormalizedSE", r.Bridge.NormalizedSE, old.Bridge.NormalizedSE)
	eq("Bridge.BalanceSE", r.Bridge.BalanceSE, old.Bridge.BalanceSE)
	eq("Bridge.AcceptESS", r.Bridge.AcceptESS, old.Bridge.AcceptESS)
	eq("Bridge.MinAcceptESS", r.Bridge.MinAcceptESS, old.Bridge.MinAcceptESS)
	eq("Bridge.MinFrom,MinTo", []int{r.Bridge.MinFrom, r.Bridge.MinTo}, []int{old.Bridge.MinFrom, old.Bridge.MinTo})
	eq("Evidence.LogZ", r.Evidence.LogZ, old.Evidence.LogZ)
	eq("Evidence.LogZSE", r.Evidence.LogZSE, old.Evidence.LogZSE)
	eq("ModelEvidence.LogZ", r.ModelEvidence.LogZ, old.ModelEvidence.LogZ)
	eq("ModelEvidence.LogZSE", r.ModelEvidence.LogZSE, old.ModelEvidence.LogZSE)
	eq("Chains.NumModels", r.Chains.NumModels, old.Chains.NumModels)
	for k, tr := range old.Transports {
		q := r.Transports[k].Quality
		eq("Quality", []float64{q.HeldOutLogLik, q.HeldOutSE, q.ESSFraction}, []float64{tr.Quality.HeldOutLogLik, tr.Quality.HeldOutSE, tr.Quality.ESSFraction})
	}
	if r.Seed != 5 || len(r.Chain) != 8 || r.Chain[6].Mixed || r.Chain[1].P != 0.66 || len(r.Chains.Chains) != 2 {
		t.Errorf("read %s", r)
	}
}
