package posteriordb

import (
	"math"
	"testing"

	"github.com/trjgo/trj/ppl"
)

// checkAgainstReference samples m with NUTS and compares each parameter's
// mean, sd and 5 %/95 % quantiles with the embedded reference summary of
// posterior: each standardised difference z = (ours − reference) /
// √(MCSE² + MCSE_ref²) must satisfy |z| ≤ 4. It returns the largest |z|.
func checkAgainstReference(t *testing.T, posterior string, m *ppl.GraphModel, chains, warmup, draws int, seed uint64) float64 {
	t.Helper()
	ref := readRefSummary(t, posterior)
	cols := sampleNUTS(t, m, chains, warmup, draws, seed)
	worst := 0.0
	for _, r := range ref.Params {
		x, ok := cols[r.Name]
		if !ok {
			t.Errorf("%s: no such parameter in the model", r.Name)
			continue
		}
		got, err := summariseParam(r.Name, x)
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		stats := []struct {
			what                 string
			ours, mcse, ref, rse float64
		}{
			{"mean", got.Mean, got.MeanMCSE, r.Mean, r.MeanMCSE},
			{"sd", got.SD, got.SDMCSE, r.SD, r.SDMCSE},
		}
		if r.Q05MCSE > 0 {
			stats = append(stats,
				struct {
					what                 string
					ours, mcse, ref, rse float64
				}{"q05", got.Q05, got.Q05MCSE, r.Q05, r.Q05MCSE},
				struct {
					what                 string
					ours, mcse, ref, rse float64
				}{"q95", got.Q95, got.Q95MCSE, r.Q95, r.Q95MCSE})
		}
		for _, s := range stats {
			z := (s.ours - s.ref) / math.Hypot(s.mcse, s.rse)
			if !(math.Abs(z) <= 4) {
				t.Errorf("%s %s: %.5g ± %.2g, reference %.5g ± %.2g: z = %.2f", r.Name, s.what, s.ours, s.mcse, s.ref, s.rse, z)
			}
			worst = math.Max(worst, math.Abs(z))
		}
	}
	t.Logf("%s: largest |z| %.2f over %d parameters", posterior, worst, len(ref.Params))
	return worst
}

// The reference checks of the five posteriors of issue 33's second batch.
// Each runs two short NUTS chains (a few CPU-seconds) and is skipped with
// -short.
func TestReferenceHMMDriveGPPK(t *testing.T) {
	if testing.Short() {
		t.Skip("NUTS reference checks: about a minute of CPU; skipped with -short")
	}
	cases := []struct {
		posterior             string
		build                 func(string) (*ppl.GraphModel, error)
		chains, warmup, draws int
		seed                  uint64
	}{
		{"gp_pois_regr-gp_regr", GPRegr, 2, 500, 1000, 21},
		{"one_comp_mm_elim_abs-one_comp_mm_elim_abs", OneCompMMElimAbs, 2, 500, 1000, 22},
		{"bball_drive_event_0-hmm_drive_0", HMMDrive0, 2, 300, 500, 23},
		{"bball_drive_event_1-hmm_drive_1", HMMDrive1, 2, 300, 500, 24},
		{"mcycle_gp-accel_gp", AccelGP, 2, 300, 300, 25},
	}
	for _, c := range cases {
		t.Run(c.posterior, func(t *testing.T) {
			m, err := c.build("")
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstReference(t, c.posterior, m, c.chains, c.warmup, c.draws, c.seed)
		})
	}
}
