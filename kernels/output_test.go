package kernels

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/trjgo/trj/ppl/draws"
)

// identity constrains a position to itself, with names x.1, x.2, ….
type identity int

func (n identity) ParamNames() []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "x." + string(rune('1'+i))
	}
	return names
}

func (n identity) Constrain(u, dst []float64) error { copy(dst, u); return nil }

// TestStreamedOutputMatchesToDraws checks that the draws CmdStanOutput
// streams while the chains run are those ToDraws converts afterwards, with
// the adaptation and elapsed-time blocks in each chain's file.
func TestStreamedOutputMatchesToDraws(t *testing.T) {
	for _, alg := range []Method{NUTSMethod{}, RWMMethod{}} {
		g := newGaussian(t, []float64{0, 1}, diagCov([]float64{1, 2}))
		bufs := make([]bytes.Buffer, 2)
		layout := draws.Layout{Diagnostics: alg.DiagnosticColumns(), Params: identity(2).ParamNames()}
		mem, err := draws.New(layout, 2)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{
			Method: alg, Chains: 2, Warmup: 40, Draws: 25, Seed: 3,
			Output: func(c int) (ChainOutput, error) {
				s, err := draws.NewStream(&bufs[c], layout, nil)
				return &CmdStanOutput{Model: identity(2), Method: alg, Chain: c, Draws: mem, Stream: s}, err
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		after, err := res.ToDraws(func(int) Constrainer { return identity(2) })
		if err != nil {
			t.Fatal(err)
		}
		for c := range 2 {
			text := bufs[c].String()
			read, _, err := draws.ReadCSV(strings.NewReader(text))
			if err != nil {
				t.Fatalf("%v chain %d: %v", alg, c, err)
			}
			for i := range 25 {
				for _, got := range []struct {
					d *draws.Draws
					c int
				}{{read, 0}, {mem, c}} {
					if !slices.Equal(got.d.Params(got.c, i), after.Params(c, i)) ||
						!slices.Equal(got.d.Diagnostics(got.c, i), after.Diagnostics(c, i)) {
						t.Fatalf("%v chain %d draw %d differs", alg, c, i)
					}
				}
			}
			if !strings.Contains(text, "# Adaptation terminated\n# Step size = ") || !strings.Contains(text, "seconds (Total)") {
				t.Errorf("%v chain %d: blocks missing:\n%s", alg, c, text)
			}
			if alg == (NUTSMethod{}) && !strings.Contains(text, "# Diagonal elements of inverse mass matrix:\n") {
				t.Errorf("NUTS chain %d: no metric:\n%s", c, text)
			}
		}
	}
}

// TestSampleCancelKeepsDraws cancels a run from its progress callback and
// checks that the draws made so far come back, identical to those of an
// uninterrupted run, and that the streamed file is marked interrupted.
func TestSampleCancelKeepsDraws(t *testing.T) {
	g := newGaussian(t, []float64{0}, diagCov([]float64{1}))
	set := &SampleSettings{Chains: 1, Warmup: 20, Draws: 100, Seed: 9}
	full, err := Sample(context.Background(), gaussianFactory(g), set)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	layout := draws.Layout{Diagnostics: NUTSMethod{}.DiagnosticColumns(), Params: identity(1).ParamNames()}
	cut := *set
	cut.Progress = func(p Progress) {
		if p.Done == 51 {
			cancel()
		}
	}
	cut.Output = func(c int) (ChainOutput, error) {
		s, err := draws.NewStream(&buf, layout, nil)
		return &CmdStanOutput{Model: identity(1), Stream: s}, err
	}
	part, err := Sample(ctx, gaussianFactory(g), &cut)
	if !errors.Is(err, context.Canceled) || part == nil {
		t.Fatalf("cancelled run: %v, result %v", err, part)
	}
	n := len(part.Chains[0].Info)
	if n == 0 || n >= 100 {
		t.Fatalf("cancelled run kept %d draws", n)
	}
	if !slices.Equal(part.Chains[0].Draws, full.Chains[0].Draws[:n]) {
		t.Error("draws before the interruption differ from the uninterrupted run")
	}
	read, cfg, err := draws.ReadCSV(&buf)
	if err != nil || read.Len(0) != n {
		t.Fatalf("streamed file: %v, %d draws, want %d", err, read.Len(0), n)
	}
	if !slices.ContainsFunc(cfg, func(s draws.Setting) bool { return s.Key == draws.Interrupted }) {
		t.Errorf("streamed file not marked interrupted: %v", cfg)
	}
}

// badDim is a target whose dimension depends on the chain.
type badDim struct{ n int }

func (b badDim) Dim() int { return b.n }
func (b badDim) LogDensityGrad(x, grad []float64) (float64, error) {
	for i := range grad {
		grad[i] = -x[i]
	}
	return 0, nil
}

func TestSampleRefusesBadSettings(t *testing.T) {
	g := newGaussian(t, []float64{0}, diagCov([]float64{1}))
	cases := []struct {
		name string
		set  SampleSettings
		want string
	}{
		{"draws too large", SampleSettings{Draws: 1_000_000_000_000}, "need"},
		{"chains too many", SampleSettings{Chains: 100_000_000}, "need"},
		{"warm-up overflow", SampleSettings{Warmup: math.MaxInt}, "overflow"},
		{"negative tree depth", SampleSettings{Method: NUTSMethod{MaxTreeDepth: -3}}, "tree depth"},
		{"infinite step size", SampleSettings{Method: NUTSMethod{StepSize: math.Inf(1)}}, "step size"},
	}
	for _, c := range cases {
		_, err := Sample(context.Background(), gaussianFactory(g), &c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
	_, err := Sample(context.Background(), func(c int) (Target, error) { return badDim{1 + c}, nil }, &SampleSettings{Chains: 2, Warmup: 10, Draws: 10})
	if !errors.Is(err, ErrDimension) {
		t.Errorf("targets of different dimensions: %v", err)
	}
}
