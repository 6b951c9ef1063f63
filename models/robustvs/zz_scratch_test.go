package robustvs

import (
	"context"
	"os"
	"strconv"
	"testing"
)

func TestZZRun(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	cfg := DefaultConfig()
	cfg.DataPath = "../../" + DefaultDataPath
	atoi := func(k string, d int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return v
		}
		return d
	}
	cfg.PilotDraws = atoi("N", cfg.PilotDraws)
	cfg.BridgeReplicates = atoi("REPS", cfg.BridgeReplicates)
	cfg.Train.Iterations = atoi("ITERS", cfg.Train.Iterations)
	cfg.CTrain.Iterations = atoi("ITERS", cfg.CTrain.Iterations)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res.WriteTable(os.Stdout)
	t.Logf("settings %v", res.Settings)
	for _, k := range res.Order {
		b := res.Proposals[k].Bridge
		t.Logf("%s bridge: sd %v acc %v failed %d", k, b.SD, b.MeanAcceptance, b.Failed)
	}
	if f, err := res.WriteFigures(os.TempDir() + "/vs_fig"); err != nil {
		t.Log(err)
	} else {
		t.Log(f)
	}
	res.WriteJSONFile(os.TempDir() + "/vs.json")
}
