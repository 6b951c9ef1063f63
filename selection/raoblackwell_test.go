package selection

import (
	"context"
	"math"
	"testing"

	"github.com/trjgo/trj/models/glmselect"
	"gonum.org/v1/gonum/stat"
)

// TestRaoBlackwellExact: on a Gaussian space (exact evidences) the
// Rao-Blackwellised PIPs are within 4 MCSE of the enumeration, their
// MCSEs no larger than the visit frequencies' (they average the
// frequencies' indicator given the other terms), and shards merge to
// the whole run's values.
func TestRaoBlackwellExact(t *testing.T) {
	X, y, _ := answerData()
	ev, err := glmselect.NewEvidence(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := ev.Enumerate(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &Settings{Seed: 4, Steps: 4000, Warmup: 400}
	res, err := Run(context.Background(), sp, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.PIPEstimator != pipRaoBlackwellised || len(res.PIPVisits) != len(res.Names) {
		t.Fatalf("PIPs %q with %d visit frequencies for %d terms: want Rao-Blackwellised PIPs and every term's frequency", res.PIPEstimator, len(res.PIPVisits), len(res.Names))
	}
	var rb, freq float64
	for j, e := range res.PIP {
		v := res.PIPVisits[j]
		z := (e.P - ex.PIP[j]) / e.MCSE
		t.Logf("%s: RB %.5f ± %.5f, frequency %.5f ± %.5f, exact %.5f, z %.2f", res.Names[j], e.P, e.MCSE, v.P, v.MCSE, ex.PIP[j], z)
		if !(math.Abs(z) <= 4) {
			t.Errorf("%s: RB PIP %.5f ± %.5f, exact %.5f (z = %.2f)", res.Names[j], e.P, e.MCSE, ex.PIP[j], z)
		}
		rb += e.MCSE * e.MCSE
		freq += v.MCSE * v.MCSE
	}
	if rb > freq {
		t.Errorf("RB MCSE² summed %.3g above the frequencies' %.3g", rb, freq)
	}
	a, err := Run(context.Background(), sp, &Settings{Seed: 4, Steps: 4000, Warmup: 400, Shard: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), sp, &Settings{Seed: 4, Steps: 4000, Warmup: 400, Shard: []int{2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	for j, e := range m.PIP {
		if d := math.Abs(e.P - res.PIP[j].P); d > 1e-12 {
			t.Errorf("%s: merged RB PIP %v, whole run %v", res.Names[j], e.P, res.PIP[j].P)
		}
		if d := math.Abs(m.PIPVisits[j].P - res.PIPVisits[j].P); d > 1e-12 {
			t.Errorf("%s: merged visit frequency %v, whole run %v", res.Names[j], m.PIPVisits[j].P, res.PIPVisits[j].P)
		}
	}
	old := *b
	old.PIP, old.PIPVisits, old.PIPEstimator = res.PIPVisits, nil, ""
	if _, err := Merge(a, &old); err == nil {
		t.Error("Merge took a part of visit frequencies written before PIPEstimator beside Rao-Blackwellised PIPs")
	} else {
		t.Log(err)
	}
}

// TestRaoBlackwellMCSECalibrated: over 20 seeds of short runs, the
// z-scores (RB PIP − exact)/MCSE of the terms whose exact PIP is in
// (0.02, 0.98) have a standard deviation in [0.6, 1.5]: the reported
// MCSEs cover the truth.
func TestRaoBlackwellMCSECalibrated(t *testing.T) {
	if testing.Short() {
		t.Skip("20 runs: skipped under -short")
	}
	X, y, _ := answerData()
	ev, err := glmselect.NewEvidence(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := ev.Enumerate(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	var zs []float64
	for seed := range uint64(20) {
		res, err := Run(context.Background(), sp, &Settings{Seed: 200 + seed, Steps: 1500, Warmup: 200})
		if err != nil {
			t.Fatal(err)
		}
		for j, e := range res.PIP {
			if ex.PIP[j] > 0.02 && ex.PIP[j] < 0.98 {
				zs = append(zs, (e.P-ex.PIP[j])/e.MCSE)
			}
		}
	}
	m, sd := stat.MeanStdDev(zs, nil)
	t.Logf("%d z-scores: mean %.3f, sd %.3f", len(zs), m, sd)
	if !(sd >= 0.6 && sd <= 1.5) || math.Abs(m) > 0.5 {
		t.Errorf("z-scores of the Rao-Blackwellised PIPs: mean %.3f, sd %.3f; want sd in [0.6, 1.5] and |mean| ≤ 0.5", m, sd)
	}
}
