package trj_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
// variable-selection example over TRJ_CALIBRATION_SEEDS seeds from
// TRJ_CALIBRATION_FIRST_SEED (default 1) on (it is long: set the variable
// to run it; TRJ_CALIBRATION_KINDS, a comma-separated list, picks proposal
// types; each seed's first type runs the SMC pilots the others reuse;
// TRJ_CALIBRATION_DUMP names a folder for each run's JSON result, model
// paths included, to study other estimators without rerunning) and checks that the z-scores against the
// exact model probabilities have a standard deviation in [0.7, 1.4]: the
// chains' (where mixed), the bridge estimate the table reports
// (Bridge.Reported: the balance estimate where the Bartolucci estimate is
// unreliable) and the balance estimate's in every run. A Bartolucci
// estimate marked unreliable is meant to understate its error; its
// z-scores are logged, not checked. Each run's figures are logged on lines
// starting "calib" for analysis.
func TestRobustVSCalibration(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TRJ_CALIBRATION_SEEDS"))
	if n == 0 {
		t.Skip("set TRJ_CALIBRATION_SEEDS (≥ 10) to run the calibration study")
	}
	first := uint64(1)
	if v := os.Getenv("TRJ_CALIBRATION_FIRST_SEED"); v != "" {
		var err error
		if first, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("TRJ_CALIBRATION_FIRST_SEED: %v", err)
		}
	}
	d, err := robustvs.DefaultData()
	if err != nil {
		t.Fatal(err)
	}
	exact := robustvs.Truth()
	kinds := robustvs.ProposalTypes()
	if k := os.Getenv("TRJ_CALIBRATION_KINDS"); k != "" {
		kinds = strings.Split(k, ",")
	}
	type zs struct{ chain, reported, flagged, balance []float64 }
	z := map[string]*zs{}
	runs, marked := map[string]int{}, map[string]int{}
	var ze []float64
	for seed := first; seed < first+uint64(n); seed++ {
		var pilots *trj.Fitted
		for _, kind := range kinds {
			space, s, err := robustvs.Settings(d, kind, robustvsConfig(seed), pilots)
			if err != nil {
				t.Fatal(err)
			}
			res, fitted, err := trj.RunFitted(context.Background(), space, s)
			if err != nil {
				t.Fatalf("seed %d, %s: %v", seed, kind, err)
			}
			if pilots == nil {
				pilots = fitted
				for k, p := range exact {
					ze = append(ze, (res.Evidence.P[k]-p)/res.Evidence.SE[k])
				}
			}
			t.Logf("seed %d, %s:\n%s", seed, kind, res)
			if dir := os.Getenv("TRJ_CALIBRATION_DUMP"); dir != "" {
				dumpResult(t, filepath.Join(dir, fmt.Sprintf("%s-%d.json", kind, seed)), res)
			}
			if z[kind] == nil {
				z[kind] = &zs{}
			}
			zk, b := z[kind], res.Bridge
			runs[kind]++
			if b.Unreliable {
				marked[kind]++
			}
			for k, p := range exact {
				c := res.Chain[k]
				if c.Mixed {
					zk.chain = append(zk.chain, (c.P-p)/c.MCSE)
				}
				rp, rse, _ := b.Reported()
				zk.reported = append(zk.reported, (rp[k]-p)/rse[k])
				if b.Unreliable {
					zk.flagged = append(zk.flagged, (b.Normalized[k]-p)/b.NormalizedSE[k])
				}
				bal, balSE := math.NaN(), math.NaN()
				if b.Balance != nil {
					bal, balSE = b.Balance[k], b.BalanceSE[k]
					zk.balance = append(zk.balance, (bal-p)/balSE)
				}
				t.Logf("calib %s seed=%d model=%d exact=%.6f chain=%.6f mcse=%.6f mixed=%t bridge=%.6f se=%.6f unreliable=%t minaess=%.1f balance=%.6f balse=%.6f",
					kind, seed, k, p, c.P, c.MCSE, c.Mixed, b.Normalized[k], b.NormalizedSE[k], b.Unreliable, b.MinAcceptESS, bal, balSE)
			}
		}
	}
	check := func(name string, z []float64, enforce bool) {
		if len(z) == 0 {
			t.Logf("%-24s no z-scores", name)
			return
		}
		mean, sd := stat.MeanStdDev(z, nil)
		t.Logf("%-24s %3d z-scores: mean %+.2f, sd %.2f, max |z| %.2f", name, len(z), mean, sd, maxAbs(z))
		if enforce && (math.IsNaN(sd) || sd < 0.7 || sd > 1.4) {
			t.Errorf("%s: sd of z-scores %.2f outside [0.7, 1.4]", name, sd)
		}
	}
	check("SMC evidence", ze, true)
	for _, kind := range kinds {
		zk := z[kind]
		t.Logf("%s: bridge marked unreliable in %d of %d runs", kind, marked[kind], runs[kind])
		check(kind+" chains", zk.chain, true)
		check(kind+" bridge (reported)", zk.reported, true)
		check(kind+" Bartolucci unreliable", zk.flagged, false)
		check(kind+" balance", zk.balance, true)
	}
}

func dumpResult(t *testing.T, path string, res *trj.Result) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
