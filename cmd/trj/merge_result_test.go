package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/shard"
)

// meanSpace is two models of ten observations with unit noise: a mean μ,
// or a mean μ₁ + μ₂, with standard normal priors.
func meanSpace(t *testing.T) *ppl.Space {
	t.Helper()
	y := []float64{0.9, 1.4, 0.2, 1.1, 0.7, 1.8, 0.5, 1.2, 0.6, 1.0}
	one := ppl.NewBuilder()
	mu := one.Real("mu")
	one.Sample(ppl.Normal{Mu: 0, Sigma: 1}, mu)
	one.Sample(ppl.Normal{Mu: mu, Sigma: 1}, one.Data("y", y))
	m1, err := one.Model()
	if err != nil {
		t.Fatal(err)
	}
	two := ppl.NewBuilder()
	a, b := two.Real("mu1"), two.Real("mu2")
	two.Sample(ppl.Normal{Mu: 0, Sigma: 1}, a)
	two.Sample(ppl.Normal{Mu: 0, Sigma: 1}, b)
	two.Sample(ppl.Normal{Mu: two.Check(gorgonia.Add(a, b)), Sigma: 1}, two.Data("y", y))
	m2, err := two.Model()
	if err != nil {
		t.Fatal(err)
	}
	space, err := ppl.NewSpace([]ppl.Model{m1, m2}, ppl.WithLabels("one", "two"))
	if err != nil {
		t.Fatal(err)
	}
	return space
}

// TestMergeTRJResults splits a trj.Run of four chains into two shards
// with package shard, writes them as separate processes would, and merges
// them with "trj merge": the merged result is the whole run's apart from
// wall times; a missing shard and a shard of another seed are refused.
func TestMergeTRJResults(t *testing.T) {
	if testing.Short() {
		t.Skip("several whole runs and shards; the full suite (without -short) runs them")
	}
	space := meanSpace(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	settings := func(seed uint64) *trj.Settings {
		return &trj.Settings{Seed: seed, Pilot: trj.PilotSettings{Method: trj.NUTSPilots{Warmup: 200, Draws: 400}}, Chains: trj.ChainSettings{Chains: 4, Steps: 600}}
	}
	write := func(name string, s *trj.Settings) {
		t.Helper()
		res, err := trj.Run(context.Background(), space, s)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p(name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := res.WriteJSON(f); err != nil {
			t.Fatal(err)
		}
	}
	write("whole.json", settings(2))
	for i, name := range []string{"s1.json", "s2.json"} {
		s := settings(2)
		s.Chains.Shard = shard.Shard{Index: i + 1, Count: 2}.Indices(s.Chains.Chains)
		write(name, s)
	}
	other := settings(3)
	other.Chains.Shard = []int{2, 3}
	write("other.json", other)

	code, stdout, stderr := runArgs("merge", "-quiet", "-out", p("figs"), "-json", p("merged.json"), p("s2.json"), p("s1.json"))
	if code != exitOK {
		t.Fatalf("merge: code %d, %s", code, stderr)
	}
	if !strings.Contains(stdout, "one") || !strings.Contains(stdout, "two") {
		t.Errorf("table:\n%s", stdout)
	}
	if st, err := os.Stat(p("figs/running.png")); err != nil || st.Size() == 0 {
		t.Errorf("running figure: %v", err)
	}
	load := func(name string) map[string]any {
		m, _ := readJSONMap(t, p(name))
		delete(m, "timings")
		return m
	}
	if w, m := load("whole.json"), load("merged.json"); !reflect.DeepEqual(w, m) {
		for k := range w {
			if !reflect.DeepEqual(w[k], m[k]) {
				t.Errorf("%s: whole run %v, merged shards %v", k, w[k], m[k])
			}
		}
	}
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{"s2.json"}, "chains 1, 2 are in none"},
		{[]string{"s1.json", "other.json"}, "different run"},
		{[]string{"s1.json", "s1.json"}, "in both"},
	} {
		args := []string{"merge", "-quiet", "-out", p("bad")}
		for _, f := range c.files {
			args = append(args, p(f))
		}
		if code, _, stderr := runArgs(args...); code != exitFail || !strings.Contains(stderr, c.want) {
			t.Errorf("merge %v: code %d, %s; want a failure mentioning %q", c.files, code, stderr, c.want)
		}
	}
}
