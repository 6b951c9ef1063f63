package selection

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/glmselect"
)

// The p = 20 measurement (issue 23's must-show): not a test, run by hand
// with TRJ_SELECT_MEASURE set, e.g.
//
//	TRJ_SELECT_MEASURE=default TRJ_SELECT_SEEDS=5 go test -run TestSelectMeasureP20 -v -timeout 0 .
//
// The exact PIPs of the data set are in testdata/select_p20_exact.json
// (TestSelectWriteExactP20 with TRJ_SELECT_EXACT=1 writes them).

const p20N, p20Seed = 150, 20

func TestSelectWriteExactP20(t *testing.T) {
	if os.Getenv("TRJ_SELECT_EXACT") == "" {
		t.Skip("set TRJ_SELECT_EXACT=1 to enumerate the 2^20 models")
	}
	X, y := selectData(p20N, 20, p20Seed)
	nig, err := glmselect.NewEvidence(X, y, nigSettings)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ex, err := nig.Enumerate(context.Background(), 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("enumerated 2^20 models in %v; PIPs %v", time.Since(start), ex.PIP)
	out := map[string]any{"n": p20N, "seed": p20Seed, "pip": ex.PIP, "size": ex.Size, "logZ": ex.LogZ}
	b, _ := json.MarshalIndent(out, "", "  ")
	if err := os.WriteFile("testdata/select_p20_exact.json", b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readExactP20(t *testing.T) []float64 {
	b, err := os.ReadFile("testdata/select_p20_exact.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Pip []float64 }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.Pip
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func TestSelectMeasureP20(t *testing.T) {
	mode := os.Getenv("TRJ_SELECT_MEASURE")
	if mode == "" {
		t.Skip("set TRJ_SELECT_MEASURE to measure")
	}
	var want []float64
	X, y := selectData(p20N, 20, p20Seed)
	if envInt("TRJ_SELECT_P", 20) == 12 {
		X, y = selectData(80, 12, 1)
		want = exactPIPs(t, X, y)
	} else {
		want = readExactP20(t)
	}
	sp, err := glmselect.Gaussian(X, y, &glmselect.Settings{Prior: glmselect.NormalInverseGamma{}, Cache: envInt("TRJ_SELECT_CACHE", 0)})
	if err != nil {
		t.Fatal(err)
	}
	seeds := envInt("TRJ_SELECT_SEEDS", 3)
	s := &Settings{Steps: envInt("TRJ_SELECT_STEPS", 0), Chains: envInt("TRJ_SELECT_CHAINS", 0), Warmup: envInt("TRJ_SELECT_WARMUP", 0)}
	ks := &kernels.SelectionSettings{Independence: envInt("TRJ_SELECT_IMH", 0), RandomWalk: envInt("TRJ_SELECT_RWM", 0)}
	if v, err := strconv.ParseFloat(os.Getenv("TRJ_SELECT_SWAP"), 64); err == nil {
		ks.SwapProb = v
	}
	s.Kernel = ks
	if name := os.Getenv("TRJ_SELECT_PROPOSAL"); name != "" {
		pr, err := ParseProposal(name)
		if err != nil {
			t.Fatal(err)
		}
		s.Proposal = pr
	}
	s.Informed = os.Getenv("TRJ_SELECT_INFORMED") != ""
	var zs []float64
	first := envInt("TRJ_SELECT_SEED0", 1)
	for seed := first; seed < first+seeds; seed++ {
		s.Seed = uint64(seed)
		c0, w0 := cpuSeconds(), time.Now()
		res, err := Run(context.Background(), sp, s)
		if err != nil {
			t.Fatal(err)
		}
		cpu, wall := cpuSeconds()-c0, time.Since(w0).Seconds()
		maxErr, maxZ, minESS := 0.0, 0.0, math.Inf(1)
		for j, e := range res.PIP {
			d := math.Abs(e.P - want[j])
			maxErr = max(maxErr, d)
			if e.MCSE > 0 && want[j] > 0.001 && want[j] < 0.999 {
				z := (e.P - want[j]) / e.MCSE
				zs = append(zs, z)
				maxZ = max(maxZ, math.Abs(z))
				minESS = min(minESS, e.ESS)
			}
		}
		acc := ""
		for _, m := range res.Moves {
			acc += fmt.Sprintf(" %s %.3f", m.Move, float64(m.Accepted)/math.Max(1, float64(m.Proposed)))
		}
		zline := ""
		for j, e := range res.PIP {
			if e.MCSE > 0 && want[j] > 0.001 && want[j] < 0.999 {
				zline += fmt.Sprintf(" %.3f", (e.P-want[j])/e.MCSE)
			}
		}
		t.Logf("%s seed %d z-scores:%s", mode, seed, zline)
		t.Logf("%s seed %d: max|err| %.4f max|z| %.2f minESS %.0f (%.0f/cpu-s) wall %.1fs cpu %.1fs visited %d built %d flagged %d accept%s within %.3f",
			mode, seed, maxErr, maxZ, minESS, minESS/cpu, wall, cpu, res.Visited, res.Built, res.Flagged, acc, float64(res.Within.Accepted)/float64(res.Within.Proposed))
		if seed == first && os.Getenv("TRJ_SELECT_PRINT") != "" {
			t.Log(res)
		}
	}
	m, sd := stat.MeanStdDev(zs, nil)
	t.Logf("%s: %d z-scores, mean %.3f sd %.3f", mode, len(zs), m, sd)
}
