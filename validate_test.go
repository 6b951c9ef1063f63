package trj_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
)

// TestRunBadSettingsUpFront: settings the later stages (chains, shards,
// transports, start) cannot run are refused before the first pilot, with an
// error naming the setting. The pilots are long (10⁶ draws per chain), and
// the first progress report cancels the run, so a check that came after
// them fails the test at once instead of passing late.
func TestRunBadSettingsUpFront(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	K := space.NumModels()
	// A set of two one-dimensional transports: the space has 8 models.
	var set bytes.Buffer
	var entries []flows.Labeled
	for _, l := range []string{"a", "b"} {
		a, err := flows.NewAffine([]float64{0}, mat.NewDiagDense(1, []float64{1}))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, flows.Labeled{Model: l, Dim: 1, Flow: a})
	}
	if err := flows.SaveSet(&set, entries); err != nil {
		t.Fatal(err)
	}
	start := func(k, n int, v float64) func(int, *rand.Rand) (int, []float64, error) {
		return func(int, *rand.Rand) (int, []float64, error) {
			theta := make([]float64, n)
			for i := range theta {
				theta[i] = v
			}
			return k, theta, nil
		}
	}
	dim0 := space.ModelDim(0)
	user := &trj.UserTransports{New: func(int) (kernels.Transport, error) { return nil, errors.New("not called") }}
	outDir := t.TempDir()
	for _, c := range []struct {
		name   string
		edit   func(s *trj.Settings)
		want   string
		tooBig bool // errors.Is(err, kernels.ErrTooLarge)
	}{
		{name: "shard out of range", edit: func(s *trj.Settings) { s.Chains.Shard = []int{0, 4} }, want: "Chains.Shard holds chain 4"},
		{name: "shard out of range, output", edit: func(s *trj.Settings) { s.Chains.Shard = []int{6}; s.OutputDir = outDir }, want: "Chains.Shard holds chain 6"},
		{name: "shard negative", edit: func(s *trj.Settings) { s.Chains.Shard = []int{-1} }, want: "chain -1"},
		{name: "shard repeated", edit: func(s *trj.Settings) { s.Chains.Shard = []int{1, 1} }, want: "chain 1 twice"},
		{name: "shard empty", edit: func(s *trj.Settings) { s.Chains.Shard = []int{} }, want: "Chains.Shard is empty"},
		{name: "chains negative", edit: func(s *trj.Settings) { s.Chains.Chains = -3 }, want: "-3 chains (Chains.Chains)"},
		{name: "chains 1e9", edit: func(s *trj.Settings) { s.Chains.Chains = 1e9 }, want: "Chains.Chains = 1000000000"},
		{name: "steps 1e9", edit: func(s *trj.Settings) { s.Chains.Steps = 1e9 }, want: "MaxSteps", tooBig: true},
		{name: "max steps 1e12", edit: func(s *trj.Settings) { s.Chains.MaxSteps = 1e12 }, want: "MaxSteps", tooBig: true},
		{name: "steps MaxInt", edit: func(s *trj.Settings) { s.Chains.Steps = math.MaxInt }, want: "overflow"},
		{name: "warm-up MaxInt", edit: func(s *trj.Settings) { s.Chains.Warmup = math.MaxInt }, want: "Chains.Warmup"},
		{name: "pilot warm-up MaxInt", edit: func(s *trj.Settings) { s.Pilot.Warmup = math.MaxInt }, want: "Pilot.Warmup"},
		{name: "pilot draws 1e12", edit: func(s *trj.Settings) { s.Pilot.Draws = 1e12 }, want: "the pilots", tooBig: true},
		{name: "pilot chains 1e9", edit: func(s *trj.Settings) { s.Pilot.Chains = 1e9 }, want: "Pilot.Chains"},
		{name: "given draws, NUTS pilots", edit: func(s *trj.Settings) { s.Pilot.Given = [][][][]float64{} }, want: "Pilot.Method is NUTS"},
		{name: "bridge proposals negative", edit: func(s *trj.Settings) { s.Bridge.Proposals = -1 }, want: "bridge proposals"},
		{name: "RW scale NaN", edit: func(s *trj.Settings) { s.Chains.RWScale = math.NaN() }, want: "scale NaN (Chains.RWScale)"},
		{name: "jump floor +Inf", edit: func(s *trj.Settings) { s.Chains.JumpFloor = math.Inf(1) }, want: "jump floor"},
		{name: "fixed jump NaN", edit: func(s *trj.Settings) {
			s.Chains.Jump = make([]float64, K)
			for k := range K {
				s.Chains.Jump[k] = 1 / float64(K)
			}
			s.Chains.Jump[3] = math.NaN()
		}, want: "probability 3 is NaN"},
		{name: "AutoESS NaN", edit: func(s *trj.Settings) { s.Proposals = &trj.AutoTransports{AutoESS: math.NaN()} }, want: "Settings.Proposals.AutoESS is NaN"},
		{name: "SMC ESS fraction Inf", edit: func(s *trj.Settings) {
			s.Pilot.Method = trj.PilotSMC
			s.Pilot.SMC = &kernels.SMCSettings{ESSFraction: math.Inf(1)}
		}, want: "Settings.Pilot.SMC.ESSFraction is +Inf"},
		{name: "aux scale Inf", edit: func(s *trj.Settings) {
			s.Proposals = &trj.IndependentAux{Aux: kernels.NormalAux{SD: math.Inf(1)}}
		}, want: "Settings.Proposals.Aux.SD is +Inf"},
		{name: "learning rate NaN", edit: func(s *trj.Settings) {
			s.Proposals = &trj.RQMATransports{Train: &flows.TrainOptions{LearningRate: math.NaN()}}
		}, want: "Settings.Proposals.Train.LearningRate is NaN"},
		{name: "permutations", edit: func(s *trj.Settings) { s.Proposals = &trj.AffineTransports{Permutations: [][][]int{nil}} }, want: "Permutations"},
		{name: "loaded set of other models", edit: func(s *trj.Settings) {
			s.Proposals = &trj.LoadedTransports{From: bytes.NewReader(set.Bytes())}
		}, want: "2 transports, the space has 8 models"},
		{name: "loaded garbage", edit: func(s *trj.Settings) { s.Proposals = &trj.LoadedTransports{From: strings.NewReader("no set")} }, want: "loading transports"},
		{name: "loaded empty", edit: func(s *trj.Settings) { s.Proposals = &trj.LoadedTransports{From: strings.NewReader("")} }, want: "From is empty"},
		{name: "start: model out of range", edit: func(s *trj.Settings) { s.Chains.Start = start(K, 1, 0) }, want: "gives model 8"},
		{name: "start: wrong length", edit: func(s *trj.Settings) { s.Chains.Start = start(0, dim0+1, 0) }, want: "θ of length"},
		{name: "start: NaN", edit: func(s *trj.Settings) { s.Chains.Start = start(0, dim0, math.NaN()) }, want: "start where it is finite"},
		{name: "start: error", edit: func(s *trj.Settings) {
			s.Chains.Start = func(int, *rand.Rand) (int, []float64, error) { return 0, nil, errors.New("no start") }
		}, want: "no start"},
		{name: "shard with an unnamed function", edit: func(s *trj.Settings) { s.Proposals = user; s.Chains.Shard = []int{0} }, want: "Settings.Tag"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		s := &trj.Settings{
			Pilot:    trj.PilotSettings{Warmup: 10, Draws: 1_000_000},
			Chains:   trj.ChainSettings{Chains: 4},
			Progress: func(trj.Progress) { cancel() },
		}
		c.edit(s)
		res, err := trj.Run(ctx, space, s)
		cancel()
		t.Logf("%s: %v", c.name, err)
		switch {
		case err == nil || !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		case c.tooBig && !errors.Is(err, kernels.ErrTooLarge):
			t.Errorf("%s: err = %v, want kernels.ErrTooLarge", c.name, err)
		case res != nil:
			t.Errorf("%s: a result with stages %v", c.name, res.Timings)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(outDir, "*")); len(files) > 0 {
		t.Errorf("refused runs left files: %v", files)
	}
	if _, err := os.Stat(outDir); err != nil {
		t.Error(err)
	}
}
