package trj_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// TestRunBadInput: each bad input gets an error naming its cause, before
// any computation where the input can be checked up front.
func TestRunBadInput(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	one, err := space.Model(0)
	if err != nil {
		t.Fatal(err)
	}
	single, err := ppl.NewSpace([]ppl.Model{one})
	if err != nil {
		t.Fatal(err)
	}
	wrongDim := make([]kernels.Transport, space.NumModels())
	for k := range wrongDim {
		a, err := flows.NewAffine(make([]float64, 5), mat.NewDiagDense(5, []float64{1, 1, 1, 1, 1}))
		if err != nil {
			t.Fatal(err)
		}
		wrongDim[k] = a
	}
	for _, c := range []struct {
		name  string
		space *ppl.Space
		s     *trj.Settings
		want  string
	}{
		{"nil space", nil, nil, "nil space"},
		{"one model", single, nil, "at least 2"},
		{"odd pilot chains", space, &trj.Settings{Pilot: trj.PilotSettings{Method: trj.NUTSPilots{Chains: 3}}}, "pilot chains"},
		{"too few SMC runs", space, &trj.Settings{Pilot: trj.PilotSettings{Method: trj.SMCPilots{Runs: 2}}}, "SMC runs"},
		{"given draws missing", space, &trj.Settings{Pilot: trj.PilotSettings{Method: trj.GivenPilots{}}}, "given for 0 models"},
		{"user transports missing", space, &trj.Settings{Pilot: trj.PilotSettings{Method: trj.NUTSPilots{Warmup: 100, Draws: 100}}, Proposals: &trj.UserTransports{}}, "user transports"},
		{"jump floor", space, &trj.Settings{Chains: trj.ChainSettings{JumpFloor: 0.5}}, "jump floor"},
		{"steps", space, &trj.Settings{Chains: trj.ChainSettings{Steps: -5}}, "steps"},
		{"one bridge group", space, &trj.Settings{Bridge: trj.BridgeSettings{Groups: 1}}, "bridge groups"},
		{"unwritable output", space, &trj.Settings{OutputDir: "/proc/no/such/dir"}, "output folder"},
		{"user transport of the wrong dimension", space, &trj.Settings{
			Pilot:     trj.PilotSettings{Method: trj.NUTSPilots{Warmup: 100, Draws: 100}},
			Proposals: &trj.UserTransports{New: func(k int) (kernels.Transport, error) { return wrongDim[k], nil }}}, "dimension 5"},
	} {
		_, err := trj.Run(context.Background(), c.space, c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

// TestRunCancelled: a run cancelled during the chains returns what had
// finished, marked incomplete, with the context's error.
func TestRunCancelled(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := smallSettings(1)
	s.Chains.Steps, s.Chains.Warmup = 1_000_000, 100
	s.Progress = func(p pipeline.Progress) {
		if p.Stage == "chains" && p.Chain == 0 && p.Done >= 2000 {
			cancel()
		}
	}
	res, err := trj.Run(ctx, space, s)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.Complete || res.Bridge == nil || res.Chains == nil || res.Steps == 0 {
		t.Fatalf("cancelled run kept too little: %+v", res)
	}
	if res.Steps >= 4*1_000_000 {
		t.Errorf("cancelled run went on to %d steps", res.Steps)
	}
}

// TestRunCancelledInTransport: a run cancelled while the flows train stops
// promptly (each flow's trainer checks the context between Adam steps) and
// returns the finished pilots, marked incomplete, with the context's error.
func TestRunCancelledInTransport(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := smallSettings(1)
	train := flows.DefaultTrainOptions()
	var mu sync.Mutex
	steps, after := 0, 0
	cancelled := false
	train.Progress = func(p flows.Progress) {
		mu.Lock()
		defer mu.Unlock()
		steps++
		if cancelled {
			after++
		}
		if p.Iteration == 3 && !cancelled {
			cancelled = true
			cancel()
		}
	}
	s.Proposals = &trj.RQMATransports{Train: &train}
	res, fitted, err := trj.RunFitted(ctx, space, s)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.Complete || fitted == nil || len(fitted.Pilots) != space.NumModels() || res.Bridge != nil || res.Chains != nil {
		t.Fatalf("run cancelled in the transport stage: %+v", res)
	}
	for k, p := range fitted.Pilots {
		if p == nil {
			t.Errorf("pilot %d missing", k)
		}
	}
	// After the cancel each flow still training may finish the step it was
	// in, and no flow starts another.
	if after > space.NumModels()-1 {
		t.Errorf("%d training steps ran after the cancel (of %d in all)", after, steps)
	}
}
