package selection

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/draws"
)

// interruptedRun runs chains 0 and 1 of a 3-chain run and cancels it when
// chain 1 has kept short steps and chain 0 at least long (chain 1 waits
// for chain 0, which never waits, so the lengths differ whether the chains
// run side by side or one after the other, whatever GOMAXPROCS). It
// returns the result and what each chain had kept when cancelled.
func interruptedRun(t *testing.T, sp *ppl.SelectionSpace, s *Settings, long, short int64) (*Result, [2]int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var kept [2]atomic.Int64
	var atCancel [2]int64
	ready := make(chan struct{})
	s.record = func(chain int, _ []int, _ []float64) {
		n := kept[chain].Add(1)
		switch {
		case chain == 0 && n == long:
			close(ready)
		case chain == 1 && n == short:
			<-ready
			atCancel[0], atCancel[1] = kept[0].Load(), n
			cancel()
		}
	}
	res, err := Run(ctx, sp, s)
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("cancelled run: err %v, result %v", err, res)
	}
	return res, atCancel
}

// TestRunInterruptedKeepsEveryStep: a run cancelled with its chains at
// different lengths keeps every finished step of every chain (none cut to
// the shortest), counts them all in every estimate, is marked partial
// with the reason, marks the draws files of the chains it stopped, prints
// and round-trips through JSON as partial, and merges into a partial
// result.
func TestRunInterruptedKeepsEveryStep(t *testing.T) {
	X, y := selectData(60, 8, 4)
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	const steps = 5000
	dir := t.TempDir()
	s := &Settings{Seed: 3, Chains: 3, Shard: []int{0, 1}, Steps: steps, Warmup: 50, DrawsDir: dir}
	res, atCancel := interruptedRun(t, sp, s, 1000, 100)

	if res.Complete || res.Stopped != context.Canceled.Error() {
		t.Errorf("complete %v, stopped %q: want a partial result stopped by %q", res.Complete, res.Stopped, context.Canceled)
	}
	if len(res.ChainSteps) != 2 {
		t.Fatalf("chain steps %v, want 2 chains", res.ChainSteps)
	}
	sum := 0
	for i, n := range res.ChainSteps {
		if int64(n) < atCancel[i] || n > steps {
			t.Errorf("chain %d kept %d steps, had %d when cancelled (of %d)", i, n, atCancel[i], steps)
		}
		sum += n
	}
	if res.ChainSteps[0] == res.ChainSteps[1] {
		t.Errorf("chains cut to one length: %v", res.ChainSteps)
	}
	if res.Steps != sum || res.Size.Steps != sum || res.PIP[0].Steps != sum || res.Top[0].Estimate.Steps != sum {
		t.Errorf("steps %d, size over %d, PIP over %d, top model over %d: want every kept step, %d",
			res.Steps, res.Size.Steps, res.PIP[0].Steps, res.Top[0].Estimate.Steps, sum)
	}

	// The files hold every kept step; those of stopped chains are marked.
	var ones float64
	for i, n := range res.ChainSteps {
		d, set, err := readChainFile(filepath.Join(dir, fmt.Sprintf("select-%d.csv", i)))
		if err != nil {
			t.Fatal(err)
		}
		if d.Len(0) != n {
			t.Errorf("chain %d: file of %d rows, result %d steps", i, d.Len(0), n)
		}
		marked := slices.ContainsFunc(set, func(s draws.Setting) bool { return s.Key == draws.Interrupted })
		if marked != (n < steps) {
			t.Errorf("chain %d (%d of %d steps): marked interrupted %v", i, n, steps, marked)
		}
		for _, v := range termColumn(t, filepath.Join(dir, fmt.Sprintf("select-%d.csv", i)), "x1") {
			ones += v
		}
	}
	if got := ones / float64(sum); math.Abs(got-res.VisitFrequencies()[0].P) > 1e-12 {
		t.Errorf("PIP of x1 %v, mean of its indicator over every kept step %v", res.VisitFrequencies()[0].P, got)
	}

	// The table and JSON say it is partial, and why; ReadResult reads it.
	for _, text := range []string{res.String(), roundTrip(t, res).String()} {
		if !strings.Contains(text, "PARTIAL RESULT") || !strings.Contains(text, context.Canceled.Error()) || !strings.Contains(text, "Posterior inclusion probabilities") {
			t.Errorf("table of a partial result:\n%s", text)
		}
	}
	back := roundTrip(t, res)
	if back.Complete || back.Stopped != res.Stopped || !slices.Equal(back.ChainSteps, res.ChainSteps) || !sameEstimate(back.PIP[2], res.PIP[2]) {
		t.Errorf("JSON round trip: complete %v, stopped %q, chain steps %v, PIP %+v; want %q, %v, %+v",
			back.Complete, back.Stopped, back.ChainSteps, back.PIP[2], res.Stopped, res.ChainSteps, res.PIP[2])
	}

	// A partial shard merges; the merged result is partial.
	s2 := &Settings{Seed: 3, Chains: 3, Shard: []int{2}, Steps: steps, Warmup: 50}
	rest, err := Run(context.Background(), sp, s2)
	if err != nil || !rest.Complete {
		t.Fatalf("whole shard: %v, complete %v", err, rest.Complete)
	}
	m, err := Merge(back, rest)
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete || !strings.Contains(m.Stopped, "part 1") || m.Steps != sum+steps || !slices.Equal(m.ChainSteps, append(slices.Clone(res.ChainSteps), steps)) {
		t.Errorf("merged: complete %v, stopped %q, %d steps, chain steps %v", m.Complete, m.Stopped, m.Steps, m.ChainSteps)
	}
	if !strings.Contains(m.String(), "PARTIAL RESULT") {
		t.Errorf("merged table:\n%s", m)
	}
}

// TestRunRunningPIPUnequalChains: the running PIP of an interrupted run
// pools every chain's steps and ends at the PIP.
func TestRunRunningPIPUnequalChains(t *testing.T) {
	X, y := selectData(60, 8, 4)
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := interruptedRun(t, sp, &Settings{Seed: 5, Chains: 2, Steps: 3000, Warmup: 50}, 800, 60)
	for j := range res.PIP {
		run := res.RunningPIP(j)
		if len(run) != slices.Max(res.ChainSteps) || math.Abs(run[len(run)-1]-res.VisitFrequencies()[j].P) > 1e-12 {
			t.Errorf("term %d: running PIP of %d steps ending at %v, PIP %v (chains %v)", j, len(run), run[len(run)-1], res.VisitFrequencies()[j].P, res.ChainSteps)
		}
	}
	if err := res.WriteRunningFigure(filepath.Join(t.TempDir(), "running.png")); err != nil {
		t.Error(err)
	}
}

// TestReadResultWithoutComplete: a result written before results carried
// "complete" is complete when every chain kept its steps.
func TestReadResultWithoutComplete(t *testing.T) {
	for _, c := range []struct {
		steps int
		want  bool
	}{{400, true}, {300, false}} {
		js := fmt.Sprintf(`{"names":["a"],"pip":[{"p":0.5,"mcse":0.1,"rhat":1,"ess":10,"mixed":true}],"chains":[0,1],"steps":%d,"steps_per_chain":200}`, c.steps)
		r, err := ReadResult(strings.NewReader(js))
		if err != nil || r.Complete != c.want {
			t.Errorf("%d of 2×200 steps: complete %v (err %v), want %v", c.steps, r != nil && r.Complete, err, c.want)
		}
	}
}

func roundTrip(t *testing.T, r *Result) *Result {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResult(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func readChainFile(path string) (*draws.Draws, []draws.Setting, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return draws.ReadCSV(f)
}

// sameEstimate reports whether a and b are equal, NaN equal to NaN.
func sameEstimate(a, b pipeline.Estimate) bool {
	same := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	return same(a.P, b.P) && same(a.MCSE, b.MCSE) && same(a.Rhat, b.Rhat) && same(a.ESS, b.ESS) && a.Mixed == b.Mixed && a.Steps == b.Steps
}
