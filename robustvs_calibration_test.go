package trj_test

import (
	"context"
	"math"
	"os"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/models/robustvs"
)

// robustvsConfig is the experiment's configuration for the calibration
// study: trj's default pilots (40 SMC runs of 200 particles per model) and
// flow training shortened to 150 Adam steps (the standard errors must hold
// for any transport, and the study trains 20 flows per seed).
func robustvsConfig(seed uint64) robustvs.Config {
	cfg := robustvs.DefaultConfig()
	cfg.Seed, cfg.PilotDraws, cfg.BridgeReplicates = seed, 8000, 20
	cfg.Train, cfg.CTrain = flows.TrainOptions{Iterations: 150}, flows.TrainOptions{Iterations: 150}
	cfg.RQMA, cfg.CRQMA = flows.PaperRQMAConfig(), flows.PaperRQMAConfig()
	return cfg
}

// TestRobustVSCalibration runs every proposal type on the robust
// variable-selection example over TRJ_CALIBRATION_SEEDS seeds (it is long:
// set the variable to run it) and checks that the z-scores against the
// exact model probabilities have a standard deviation in [0.7, 1.4].
func TestRobustVSCalibration(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TRJ_CALIBRATION_SEEDS"))
	if n == 0 {
		t.Skip("set TRJ_CALIBRATION_SEEDS (≥ 10) to run the calibration study")
	}
	d, err := robustvs.DefaultData()
	if err != nil {
		t.Fatal(err)
	}
	exact := robustvs.Truth()
	kinds := robustvs.ProposalTypes()
	if k := os.Getenv("TRJ_CALIBRATION_KINDS"); k != "" {
		kinds = []string{k}
	}
	zc, zb := map[string][]float64{}, map[string][]float64{}
	var ze []float64
	for seed := uint64(1); seed <= uint64(n); seed++ {
		var first *trj.Result
		for _, kind := range kinds {
			space, s, err := robustvs.Settings(d, kind, robustvsConfig(seed), first)
			if err != nil {
				t.Fatal(err)
			}
			res, err := trj.Run(context.Background(), space, s)
			if err != nil {
				t.Fatalf("seed %d, %s: %v", seed, kind, err)
			}
			if first == nil {
				first = res
				for k, p := range exact {
					ze = append(ze, (res.Evidence.P[k]-p)/res.Evidence.SE[k])
				}
			}
			t.Logf("seed %d, %s:\n%s", seed, kind, res)
			for k, p := range exact {
				if c := res.Chain[k]; c.Mixed {
					zc[kind] = append(zc[kind], (c.P-p)/c.MCSE)
				}
				zb[kind] = append(zb[kind], (res.Bridge.Normalized[k]-p)/res.Bridge.NormalizedSE[k])
			}
		}
	}
	check := func(name string, z []float64) {
		mean, sd := stat.MeanStdDev(z, nil)
		t.Logf("%-22s %3d z-scores: mean %+.2f, sd %.2f, max |z| %.2f", name, len(z), mean, sd, maxAbs(z))
		if math.IsNaN(sd) || sd < 0.7 || sd > 1.4 {
			t.Errorf("%s: sd of z-scores %.2f outside [0.7, 1.4]", name, sd)
		}
	}
	check("SMC evidence", ze)
	for _, kind := range kinds {
		check(kind+" chains", zc[kind])
		check(kind+" bridge", zb[kind])
	}
}
