package sas

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
)

// tinyConfig shrinks the experiment to well under a second.
func tinyConfig() Config {
	c := DefaultConfig()
	c.Seed = 11
	c.TrainDraws = 1000
	c.Chains = 3
	c.Steps = 4000
	c.BridgeReplicates = 4
	c.EvalDraws = 200
	c.Train.Iterations = 40
	c.Train.DoubleAt = nil
	c.ScatterSources, c.ScatterAux = 10, 5
	return c
}

func TestExperimentTiny(t *testing.T) {
	cfg := tinyConfig()
	res, err := Paper().Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Order, ","); got != "affine,rqma,exact" {
		t.Errorf("proposal order %q", got)
	}
	ex := res.Proposals[experiment.ProposalExact]
	// Exact transports with j_k = π make every jump accepted
	// (Proposition 1); the visited models are then independent draws from
	// (1/4, 3/4), so the MCSE of the pooled frequency is exact.
	if ex.AcceptanceRate != 1 {
		t.Errorf("exact acceptance rate %v, want 1", ex.AcceptanceRate)
	}
	n := float64(cfg.Chains * cfg.Steps)
	mcse := math.Sqrt(0.75 * 0.25 / n)
	if p := float64(ex.ModelProbabilities["2"]); math.Abs(p-0.75) > 4*mcse {
		t.Errorf("exact π̂(2) = %v, want 0.75 ± 4·%.4f", p, mcse)
	}
	for c, run := range res.Running[experiment.ProposalExact] {
		if len(run) != cfg.Steps {
			t.Fatalf("chain %d: running estimate of length %d", c, len(run))
		}
		if m := math.Sqrt(0.75 * 0.25 / float64(cfg.Steps)); math.Abs(run[cfg.Steps-1]-0.75) > 4*m {
			t.Errorf("exact chain %d ends at %v, want 0.75 ± 4·%.4f", c, run[cfg.Steps-1], m)
		}
	}
	if b := ex.Bridge; b == nil || b.Failed != 0 || math.Abs(float64(b.Normalized["2"])-0.75) > 1e-9 {
		t.Errorf("exact bridge %+v", b)
	}
	for _, kind := range []string{experiment.ProposalAffine, experiment.ProposalRQMA} {
		p := res.Proposals[kind]
		if a := float64(p.AcceptanceRate); !(a > 0 && a < 1) {
			t.Errorf("%s acceptance rate %v", kind, a)
		}
		// The pooled estimate against the truth, within 4 MCSE (from the
		// indicators' ESS across chains).
		if pr, se := float64(p.ModelProbabilities["2"]), float64(p.Stderr["2"]); !(se > 0) || math.Abs(pr-0.75) > 4*se {
			t.Errorf("%s π̂(2) = %v ± %v, want 0.75 within 4 MCSE", kind, pr, se)
		}
		if len(p.Chains) != cfg.Chains || p.Bridge == nil || p.Bridge.Replicates != cfg.BridgeReplicates {
			t.Errorf("%s: %d chains, bridge %+v", kind, len(p.Chains), p.Bridge)
		}
		if v := res.Bridge[kind]; len(v) != cfg.BridgeReplicates {
			t.Errorf("%s: %d bridge values", kind, len(v))
		}
		for _, s := range []string{experiment.StageTrain, experiment.StageChains, experiment.StageBridge} {
			if _, ok := p.Seconds[s]; !ok {
				t.Errorf("%s: no %s time", kind, s)
			}
		}
		if got := len(res.Proposed[kind]); got != cfg.ScatterSources*cfg.ScatterAux {
			t.Errorf("%s: %d scatter points", kind, got)
		}
	}
}

// TestExperimentDeterministic runs the experiment twice with one seed and
// compares everything but the wall times.
func TestExperimentDeterministic(t *testing.T) {
	cfg := tinyConfig()
	cfg.Proposals = []string{experiment.ProposalRQMA}
	cfg.Steps = 500
	encode := func() string {
		res, err := Paper().Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		res.Seconds = nil
		for _, p := range res.Proposals {
			p.Seconds = nil
		}
		var buf bytes.Buffer
		if err := res.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if a, b := encode(), encode(); a != b {
		t.Error("two runs with the same seed differ")
	}
}

func TestExperimentJSONShape(t *testing.T) {
	cfg := tinyConfig()
	cfg.Proposals = []string{experiment.ProposalExact, experiment.ProposalAffine}
	cfg.Steps = 200
	res, err := Paper().Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["experiment"] != "sas" {
		t.Errorf("experiment %v", m["experiment"])
	}
	props := m["proposals"].(map[string]any)
	if len(props) != 2 {
		t.Errorf("proposals %v", props)
	}
	for name, v := range props {
		p := v.(map[string]any)
		for _, key := range []string{"model_probabilities", "stderr", "acceptance_rate", "seconds"} {
			if _, ok := p[key]; !ok {
				t.Errorf("%s: no %q", name, key)
			}
		}
		for _, key := range []string{"model_probabilities", "stderr"} {
			labels := p[key].(map[string]any)
			if _, ok1 := labels["1"]; !ok1 || len(labels) != 2 {
				t.Errorf("%s %s: labels %v, want exactly 1 and 2", name, key, labels)
			}
		}
	}
}

func TestWriteFigures(t *testing.T) {
	cfg := tinyConfig()
	cfg.Steps = 300
	res, err := Paper().Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	files, err := res.WriteFigures(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6 {
		t.Errorf("files %v, want 3 figures × 2 formats", files)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestProposalScatterExact(t *testing.T) {
	tg := Paper()
	var tr []kernels.Transport
	for _, x := range tg.Transports() {
		tr = append(tr, x)
	}
	if _, _, err := tg.ProposalScatter(tr[:1], 7, 3); err == nil {
		t.Fatal("one transport accepted")
	}
	src, prop, err := tg.ProposalScatter(tr, 7, 3)
	if err != nil || len(src) != 21 || len(prop) != 21 {
		t.Fatalf("%d sources, %d proposals, %v", len(src), len(prop), err)
	}
	// With the exact transports the proposal of the median source with the
	// median auxiliary is the image of the origin: S(L·0) = sinh(ε/δ).
	mid := prop[3*3+1]
	want := []float64{math.Sinh(1.5 / 1), math.Sinh(-2 / 1.5)}
	if math.Abs(mid[0]-want[0]) > 1e-9 || math.Abs(mid[1]-want[1]) > 1e-9 {
		t.Errorf("median proposal %v, want %v", mid, want)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"no proposals": func(c *Config) { c.Proposals = nil },
		"unknown":      func(c *Config) { c.Proposals = []string{"magic"} },
		"duplicate":    func(c *Config) { c.Proposals = []string{"exact", "exact"} },
		"few draws":    func(c *Config) { c.TrainDraws = 3 },
		"no chains":    func(c *Config) { c.Chains = 0 },
		"no steps":     func(c *Config) { c.Steps = 0 },
		"rw scale":     func(c *Config) { c.RWScale = math.NaN() },
		"eval draws":   func(c *Config) { c.EvalDraws = 0 },
		"one group":    func(c *Config) { c.BridgeReplicates = 1 },
		"bad jump":     func(c *Config) { c.Jump = []float64{1, 0} },
		"jump length":  func(c *Config) { c.Jump = []float64{1} },
		"chain index":  func(c *Config) { c.Shard = []int{c.Chains} },
	} {
		c := tinyConfig()
		c.Proposals = []string{experiment.ProposalExact}
		mod(&c)
		if _, err := Paper().Run(context.Background(), c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Paper().Settings("magic", tinyConfig(), nil); err == nil {
		t.Error("Settings: unknown kind accepted")
	}
	if _, err := Paper().ExactDraws(experiment.Stream(1, "p", 0), 0); err == nil {
		t.Error("ExactDraws: zero draws accepted")
	}
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Paper().Run(cctx, tinyConfig()); err == nil {
		t.Error("cancelled context: no error")
	}
}

// TestRQMABeatsAffine checks the paper's claim at reduced sizes: bridge
// estimates of π(k=2) with RQMA transports vary less than with affine ones.
// The comparison is a one-sided F-test of the two variances at level 0.001
// over independent evaluation sets.
func TestRQMABeatsAffine(t *testing.T) {
	cfg := tinyConfig()
	cfg.Proposals = []string{experiment.ProposalAffine, experiment.ProposalRQMA}
	cfg.TrainDraws = 2000
	cfg.Train.Iterations = 200
	cfg.BridgeReplicates = 12
	cfg.EvalDraws = 500
	cfg.Chains, cfg.Steps = 1, 10
	cfg.ScatterSources = 0
	res, err := Paper().Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	va, vr := stat.Variance(res.Bridge[experiment.ProposalAffine], nil), stat.Variance(res.Bridge[experiment.ProposalRQMA], nil)
	df := float64(cfg.BridgeReplicates - 1)
	crit := distuv.F{D1: df, D2: df}.Quantile(0.999)
	t.Logf("bridge sd of π̂(k=2): affine %.5f, rqma %.5f; variance ratio %.1f, F(0.999) = %.1f", math.Sqrt(va), math.Sqrt(vr), va/vr, crit)
	if !(va/vr > crit) {
		t.Errorf("variance ratio affine/rqma %.2f, not above F(0.999; %v, %v) = %.2f", va/vr, df, df, crit)
	}
}

// TestMergeExperiment splits a run's chains over three parts and checks
// that merging them gives the whole run's estimates.
func TestMergeExperiment(t *testing.T) {
	cfg := tinyConfig()
	cfg.Proposals = []string{experiment.ProposalAffine, experiment.ProposalExact}
	cfg.Chains, cfg.Steps = 4, 300
	whole, err := Paper().Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Result
	for _, idx := range [][]int{{2}, {0, 1}, {3}} {
		c := cfg
		c.Shard = idx
		p, err := Paper().Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	merged, err := Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range cfg.Proposals {
		w, m := whole.Proposals[kind], merged.Proposals[kind]
		if w.ModelProbabilities["2"] != m.ModelProbabilities["2"] || w.Stderr["2"] != m.Stderr["2"] || w.AcceptanceRate != m.AcceptanceRate || len(m.Chains) != 4 {
			t.Errorf("%s: whole %v ± %v (accept %v), merged %v ± %v (accept %v), %d chains", kind,
				w.ModelProbabilities["2"], w.Stderr["2"], w.AcceptanceRate, m.ModelProbabilities["2"], m.Stderr["2"], m.AcceptanceRate, len(m.Chains))
		}
		if len(merged.Running[kind]) != 4 || m.Bridge == nil {
			t.Errorf("%s: %d running estimates, bridge %v", kind, len(merged.Running[kind]), m.Bridge)
		}
	}
	if _, err := Merge(parts[0], parts[2]); err == nil {
		t.Error("parts without chain 1 merged")
	}
	if _, err := Merge(parts[1], parts[2]); err == nil {
		t.Error("parts missing chain 3 merged")
	}
}

func TestExperimentIndicesValidate(t *testing.T) {
	for _, c := range [][]int{{5}, {1, 1}, {-1}} {
		cfg := DefaultConfig()
		cfg.Shard = c
		if err := cfg.Validate(); err == nil {
			t.Errorf("chains %v accepted", c)
		}
	}
	cfg := DefaultConfig()
	cfg.Shard = []int{4, 0}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}
