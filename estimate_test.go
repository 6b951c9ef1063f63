package trj_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/pipeline"
)

// TestReadCancelledInPilots: a run cancelled during its pilots has no
// estimate of any model's probability; Read says so for each model with the
// source "none" (P and SE NaN) rather than an unnamed NaN, and the table's
// read column shows "—" and a note.
func TestReadCancelledInPilots(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := smallSettings(1)
	var once sync.Once
	s.Progress = func(p pipeline.Progress) {
		if p.Stage == "pilot" && p.Done >= 10 {
			once.Do(cancel)
		}
	}
	res, err := trj.Run(ctx, space, s)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.Complete || res.Chain != nil {
		t.Fatalf("run cancelled in the pilots: %+v", res)
	}
	rd := res.Read()
	if len(rd) != space.NumModels() {
		t.Fatalf("Read gave %d entries for %d models", len(rd), space.NumModels())
	}
	for k, m := range rd {
		if m.From != "none" || !math.IsNaN(m.P) || !math.IsNaN(m.SE) {
			t.Errorf("model %d: Read gave %+v, want source \"none\" with P and SE NaN", k, m)
		}
	}
	if tab := res.String(); strings.Contains(tab, "NaN") || !strings.Contains(tab, "no estimate") {
		t.Errorf("table of a run cancelled in the pilots:\n%s", tab)
	}
}
