package trj_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl/draws"
)

// TestRunInterruptedKeepsEveryStep: trj.Run follows the interrupt rule of
// selection.Run. Chain 1 cancels the run at its step 1000 once chain 0
// has made 20000 (the chains of SampleRJ run side by side, so chain 0
// never waits): every finished step of both chains is kept and counted in
// the estimates (none cut to the shortest), the result is partial with
// the reason, and the draws files are marked interrupted.
func TestRunInterruptedKeepsEveryStep(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := smallSettings(1)
	s.Chains.Chains, s.Chains.Steps, s.Chains.Warmup = 2, 1_000_000, 100
	s.OutputDir = t.TempDir()
	ready := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	atCancel := [2]int{}
	last := [2]int{}
	s.Progress = func(p pipeline.Progress) {
		if p.Stage != "chains" {
			return
		}
		mu.Lock()
		last[p.Chain] = p.Done - s.Chains.Warmup
		mu.Unlock()
		switch {
		case p.Chain == 0 && p.Done >= 20000:
			once.Do(func() { close(ready) })
		case p.Chain == 1 && p.Done == 1000:
			<-ready
			mu.Lock()
			atCancel = last
			mu.Unlock()
			cancel()
		}
	}
	res, err := trj.Run(ctx, space, s)
	if !errors.Is(err, context.Canceled) || res == nil || res.Chains == nil {
		t.Fatalf("err %v, result %v: want the partial result and context.Canceled", err, res)
	}
	if res.Complete || res.Stopped != context.Canceled.Error() {
		t.Errorf("complete %v, stopped %q", res.Complete, res.Stopped)
	}
	var lens []int
	sum := 0
	for i, c := range res.Chains.Chains {
		if len(c.Models) < atCancel[i] {
			t.Errorf("chain %d kept %d steps, had %d when cancelled", i, len(c.Models), atCancel[i])
		}
		lens = append(lens, len(c.Models))
		sum += len(c.Models)
	}
	if lens[0] == lens[1] {
		t.Errorf("chains of one length %v", lens)
	}
	if res.Steps != sum {
		t.Errorf("%d steps, the chains kept %d", res.Steps, sum)
	}
	for k, e := range res.Chain {
		if e.Steps != sum {
			t.Errorf("model %d: estimate over %d steps, want every kept step (%d; chains %v)", k, e.Steps, sum, lens)
		}
	}
	for c := range 2 {
		d, set, err := draws.ReadFiles(filepath.Join(s.OutputDir, fmt.Sprintf("draws_%d.csv", c+1)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(set, func(s draws.Setting) bool { return s.Key == draws.Interrupted }) {
			t.Errorf("chain %d's file is not marked interrupted", c)
		}
		if d.Len(0) < lens[c] {
			t.Errorf("chain %d's file holds %d kept steps, the chain %d", c, d.Len(0), lens[c])
		}
	}
}

// TestMergePartialShard: a shard interrupted during its chains merges like
// a whole one, every finished step counted, into a partial result naming
// it; a shard stopped before its chains is refused, saying so.
func TestMergePartialShard(t *testing.T) {
	counts := func() [][]int { return [][]int{{0, 0}, {0, 0}} }
	part := func(chain int, models []int, complete bool) *trj.Result {
		r := &trj.Result{Labels: []string{"a", "b"}, Fingerprint: "f", NumChains: 2, Complete: complete,
			Chains: &kernels.RJSampleResult{NumModels: 2, Chains: []kernels.RJChainResult{{Chain: chain, Models: models, Proposed: counts(), Accepted: counts()}}}}
		if !complete {
			r.Stopped = context.Canceled.Error()
		}
		return r
	}
	m, err := trj.Merge(part(0, []int{0, 1, 1, 0}, true), part(1, []int{1, 1}, false))
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete || m.Stopped != "part 2: context canceled" || m.Steps != 6 || m.Chain[1].Steps != 6 || m.Chain[1].P != 4.0/6 {
		t.Errorf("merged: complete %v, stopped %q, %d steps, P(b) %+v", m.Complete, m.Stopped, m.Steps, m.Chain[1])
	}
	whole, err := trj.Merge(part(0, []int{0, 1}, true), part(1, []int{1, 1}, true))
	if err != nil || !whole.Complete || whole.Stopped != "" {
		t.Errorf("merge of whole shards: %v, complete %v, stopped %q", err, whole != nil && whole.Complete, whole.Stopped)
	}
	early := &trj.Result{Labels: []string{"a", "b"}, Fingerprint: "f", NumChains: 2, Stopped: "context canceled"}
	if _, err := trj.Merge(part(0, []int{0}, true), early); err == nil || !strings.Contains(err.Error(), "stopped before its chains (context canceled)") {
		t.Errorf("merge of a shard stopped before its chains: %v", err)
	}
}
