package factor

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/trjgo/trj/models/experiment"
)

func TestZZRun(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	cfg := DefaultConfig()
	cfg.DataPath = "../../" + DefaultDataPath
	cfg.Progress = experiment.NewProgress(os.Stderr)
	atoi := func(k string, d int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return v
		}
		return d
	}
	cfg.PilotDraws = atoi("N", cfg.PilotDraws)
	cfg.Steps = atoi("STEPS", cfg.Steps)
	cfg.Chains = atoi("CHAINS", cfg.Chains)
	cfg.BridgeReplicates = atoi("REPS", cfg.BridgeReplicates)
	cfg.Train.Iterations = atoi("ITERS", cfg.Train.Iterations)
	cfg.RQMA.HiddenPerDim = atoi("HID", cfg.RQMA.HiddenPerDim)
	cfg.RejuvenateSteps = atoi("REJ", cfg.RejuvenateSteps)
	if v := os.Getenv("PROPS"); v != "" {
		cfg.Proposals = strings.Split(v, ",")
	}
	if os.Getenv("QUIET") != "" {
		cfg.Progress = nil
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res.WriteTable(os.Stdout)
	for _, k := range res.Order {
		b := res.Proposals[k].Bridge
		if b != nil {
			t.Logf("%s bridge: mean %v sd %v acc %v failed %d", k, b.Normalized, b.SD, b.MeanAcceptance, b.Failed)
		}
	}
	if f, err := res.WriteFigures(os.TempDir() + "/fa_fig"); err != nil {
		t.Log(err)
	} else {
		t.Log(f)
	}
	res.WriteJSONFile(os.TempDir() + "/fa.json")
}
