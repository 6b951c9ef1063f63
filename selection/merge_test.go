package selection

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// smallSpace is a Gaussian selection space over 4 terms; seed picks the
// data.
func smallSpace(t *testing.T, seed uint64) *ppl.SelectionSpace {
	t.Helper()
	X, y := selectData(30, 4, seed)
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// shardOf runs chain c of the run of s on sp.
func shardOf(t *testing.T, sp *ppl.SelectionSpace, s Settings, c ...int) *Result {
	t.Helper()
	s.Shard = c
	r, err := Run(context.Background(), sp, &s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMergeRefusesOtherRuns: parts of different runs (seed, warm-up,
// chains, data), missing or repeated chains, nil and malformed parts are
// refused with an error naming the cause, never a panic.
func TestMergeRefusesOtherRuns(t *testing.T) {
	sp := smallSpace(t, 2)
	base := Settings{Seed: 1, Chains: 2, Warmup: 10, Steps: 40}
	a, b := shardOf(t, sp, base, 0), shardOf(t, sp, base, 1)
	if a.Fingerprint == "" || a.Fingerprint != b.Fingerprint || a.NumChains != 2 {
		t.Fatalf("shards of one run: fingerprints %q, %q, %d chains", a.Fingerprint, b.Fingerprint, a.NumChains)
	}
	if _, err := Merge(a, b); err != nil {
		t.Fatalf("shards of one run: %v", err)
	}
	with := func(f func(*Settings)) Settings { s := base; f(&s); return s }
	short := *b
	short.PIP = short.PIP[:2]
	badTop := *b
	badTop.Top = append([]Model{{Indices: []int{7}}}, b.Top...)
	cases := []struct {
		name  string
		parts []*Result
		want  string
	}{
		{"other seed", []*Result{a, shardOf(t, sp, with(func(s *Settings) { s.Seed = 2 }), 1)}, "Seed = 1 vs 2"},
		{"other warm-up", []*Result{a, shardOf(t, sp, with(func(s *Settings) { s.Warmup = 20 }), 1)}, "Warmup = 10 vs 20"},
		{"other chains", []*Result{a, shardOf(t, sp, with(func(s *Settings) { s.Chains = 3 }), 1, 2)}, "Chains = 2 vs 3"},
		{"other data", []*Result{a, shardOf(t, smallSpace(t, 3), base, 1)}, "the data"},
		{"missing shard", []*Result{a}, "missing chain(s) 2"},
		{"repeated shard", []*Result{a, a, b}, "chain 1 is in both part 1 and part 2"},
		{"nil part", []*Result{a, nil}, "part 2 is nil"},
		{"nil first part", []*Result{nil, b}, "part 1 is nil"},
		{"short PIP list", []*Result{a, &short}, "part 2 has 2 PIPs for 4 terms"},
		{"top model out of range", []*Result{a, &badTop}, "part 2 top model 1 has term index 7"},
	}
	for _, c := range cases {
		_, err := Merge(c.parts...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestMergeEstimates: parts whose chains sit at different constant values
// merge to R̂ = +Inf and an MCSE from the spread of their means, as a whole
// run's chains do, and every estimate counts every step.
func TestMergeEstimates(t *testing.T) {
	part := func(c int, p float64) *Result {
		e := pipeline.Estimate{P: p, Rhat: 1, Steps: 10}
		return &Result{Names: []string{"x"}, PIP: []pipeline.Estimate{e}, Size: e, Chains: []int{c}, Steps: 10, StepsPerChain: 10,
			NumChains: 2, Fingerprint: "f", Settings: map[string]string{"Seed": "1"}}
	}
	m, err := Merge(part(0, 0), part(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	whole := pipeline.EstimateMean([][]float64{make([]float64, 10), {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}})
	got := m.PIP[0]
	if got.P != 0.5 || !math.IsInf(got.Rhat, 1) || !got.Mixed || got.Steps != 20 || got.MCSE < 0.5 {
		t.Errorf("merged %+v; the whole run gives %+v", got, whole)
	}
	if !math.IsInf(whole.Rhat, 1) || whole.MCSE < 0.5 {
		t.Errorf("the whole run's rule changed: %+v", whole)
	}
}

// TestDrawsDirOfAnotherRun: a run refuses, before any work, a folder
// holding another run's chain files (a 3-chain run's select-2.csv when
// the new run has 2 chains), naming them; shards of one run share a
// folder, and each file carries the run's fingerprint.
func TestDrawsDirOfAnotherRun(t *testing.T) {
	sp := smallSpace(t, 2)
	dir := t.TempDir()
	s := Settings{Seed: 1, Chains: 3, Warmup: 5, Steps: 10, DrawsDir: dir}
	if _, err := Run(context.Background(), sp, &s); err != nil {
		t.Fatal(err)
	}
	s.Chains = 2
	var calls int
	s.Progress = func(pipeline.Progress) { calls++ }
	_, err := Run(context.Background(), sp, &s)
	if err == nil || !strings.Contains(err.Error(), "select-2.csv") || !strings.Contains(err.Error(), "another run") || calls > 0 {
		t.Errorf("a folder of another run: %v after %d progress calls", err, calls)
	}
	s.Progress = nil
	shared := t.TempDir()
	s.DrawsDir = shared
	a := shardOf(t, sp, s, 0)
	b := shardOf(t, sp, s, 1)
	if _, err := Merge(a, b); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"select-0.csv", "select-1.csv"} {
		h, err := runs.CSVSettings(filepath.Join(shared, name))
		if err != nil || h[runs.FingerprintKey] != a.Fingerprint {
			t.Errorf("%s: fingerprint %q, the run's %q (%v)", name, h[runs.FingerprintKey], a.Fingerprint, err)
		}
	}
	// A file without a fingerprint is another run's too.
	if err := os.WriteFile(filepath.Join(shared, "select-5.csv"), []byte("lp__\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), sp, &s); err == nil || !strings.Contains(err.Error(), "select-5.csv") {
		t.Errorf("a file without a fingerprint: %v", err)
	}
}

// TestFingerprintSettings: what cannot change the computation (shard,
// folder, progress) leaves the fingerprint alone; defaults given or not
// agree; every other setting changes it.
func TestFingerprintSettings(t *testing.T) {
	sp := smallSpace(t, 2)
	fp := func(s Settings) string {
		d := s.withDefaults()
		f, _ := fingerprint(sp, &d)
		return f
	}
	base := fp(Settings{})
	if fp(Settings{Shard: []int{1}, DrawsDir: "x", Progress: func(pipeline.Progress) {}, Chains: DefaultChains, Proposal: FullConditional{}}) != base {
		t.Error("shard, folder, progress or explicit defaults change the fingerprint")
	}
	start, _ := ppl.NewTerms(4, 1)
	for name, s := range map[string]Settings{
		"seed": {Seed: 3}, "chains": {Chains: 2}, "warmup": {Warmup: 7}, "steps": {Steps: 9}, "top": {Top: 3},
		"proposal": {Proposal: Laplace{}}, "informed": {Informed: true}, "start": {Start: &start},
		"kernel": {Kernel: &kernels.SelectionSettings{SwapProb: 0.2}},
	} {
		if fp(s) == base {
			t.Errorf("%s does not change the fingerprint", name)
		}
	}
	d := new(Settings).withDefaults()
	if f, _ := fingerprint(smallSpace(t, 3), &d); f == base {
		t.Error("other data: the same fingerprint")
	}
}
