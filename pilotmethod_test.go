package trj_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// drawsPilots is a pilot method of a test's own: standard normal draws,
// which edit may spoil. It counts its calls.
type drawsPilots struct {
	edit  func(p *trj.Pilot) *trj.Pilot
	check error
	calls *atomic.Int64
}

func (drawsPilots) Name() string { return "draws" }

func (d drawsPilots) CheckSpace(*ppl.Space) error { return d.check }

func (d drawsPilots) Pilot(_ context.Context, job *trj.PilotJob) (*trj.Pilot, error) {
	d.calls.Add(1)
	rng := rand.New(rand.NewPCG(job.Seed, uint64(job.K)))
	draw := func() []float64 {
		x := make([]float64, job.Model.Dim())
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	p := &trj.Pilot{Eval: make([][][]float64, 4)}
	for i := range 80 {
		p.Train = append(p.Train, draw())
		p.Eval[i%4] = append(p.Eval[i%4], draw())
	}
	if d.edit != nil {
		return d.edit(p), nil
	}
	return p, nil
}

// brokenMove is a within-model move of a test's own whose Fit fails.
type brokenMove struct{}

func (*brokenMove) Name() string { return "broken" }
func (*brokenMove) Fit(context.Context, *trj.FitData) (func() (kernels.WithinModelKernel, error), error) {
	return nil, errors.New("no kernel today")
}

// TestOwnPilotMethodChecked: a pilot method or within-model move of one's
// own is checked like the package's: its CheckSpace before any pilot, and
// the pilot it returns before any later stage uses it, each error naming
// its cause; a pointer to a method of one's own works as the method.
func TestOwnPilotMethodChecked(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	run := func(m trj.PilotMethod, within trj.WithinMove) error {
		s := &trj.Settings{Seed: 1, Pilot: trj.PilotSettings{Method: m}, Proposals: &trj.AffineTransports{},
			Chains: trj.ChainSettings{Chains: 2, Steps: 20, MaxSteps: 20, Within: within}}
		_, err := trj.Run(context.Background(), space, s)
		return err
	}
	for _, c := range []struct {
		name string
		edit func(p *trj.Pilot) *trj.Pilot
		want string
	}{
		{"nil pilot", func(*trj.Pilot) *trj.Pilot { return nil }, "no pilot (nil)"},
		{"no training", func(p *trj.Pilot) *trj.Pilot { p.Train = nil; return p }, "no training draws"},
		{"one group", func(p *trj.Pilot) *trj.Pilot { p.Eval = p.Eval[:1]; return p }, "1 evaluation groups: need at least 2"},
		{"empty group", func(p *trj.Pilot) *trj.Pilot { p.Eval[2] = nil; return p }, "evaluation group 2 is empty"},
		{"short draw", func(p *trj.Pilot) *trj.Pilot { p.Train[3] = p.Train[3][:1]; return p }, "training draw 3 has length 1"},
		{"NaN draw", func(p *trj.Pilot) *trj.Pilot { p.Eval[1][5][0] = math.NaN(); return p }, "evaluation group 1's draw 5 is not finite"},
	} {
		err := run(drawsPilots{edit: c.edit, calls: new(atomic.Int64)}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `pilot method "draws" gave a pilot Run cannot use`) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}

	calls := new(atomic.Int64)
	err := run(drawsPilots{check: errors.New("bad setting X"), calls: calls}, nil)
	if err == nil || !strings.Contains(err.Error(), `pilot method "draws": bad setting X`) || calls.Load() != 0 {
		t.Errorf("CheckSpace's error: %v after %d pilots, want it before any", err, calls.Load())
	}
	err = run(&drawsPilots{calls: calls}, &brokenMove{})
	if err == nil || !strings.Contains(err.Error(), `within-model move "broken": no kernel today`) || calls.Load() != int64(space.NumModels()) {
		t.Errorf("a move whose Fit fails: %v after %d pilots", err, calls.Load())
	}
	if err := run(&drawsPilots{calls: calls}, trj.RandomWalkMove{}); err != nil {
		t.Errorf("a pointer to a method of one's own: %v", err)
	}
	var nilMove *brokenMove
	if err := run(drawsPilots{calls: calls}, nilMove); err == nil || !strings.Contains(err.Error(), "Chains.Within is a nil *trj_test.brokenMove") {
		t.Errorf("a nil pointer to a move of one's own: %v", err)
	}
}
