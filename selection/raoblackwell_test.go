package selection

import (
	"context"
	"math"
	"testing"

	"github.com/trjgo/trj/models/glmselect"
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
	if len(res.PIPRaoBlackwell) != len(res.Names) {
		t.Fatalf("%d Rao-Blackwellised PIPs for %d terms", len(res.PIPRaoBlackwell), len(res.Names))
	}
	var rb, freq float64
	for j, e := range res.PIPRaoBlackwell {
		z := (e.P - ex.PIP[j]) / e.MCSE
		t.Logf("%s: RB %.5f ± %.5f, frequency %.5f ± %.5f, exact %.5f, z %.2f", res.Names[j], e.P, e.MCSE, res.PIP[j].P, res.PIP[j].MCSE, ex.PIP[j], z)
		if !(math.Abs(z) <= 4) {
			t.Errorf("%s: RB PIP %.5f ± %.5f, exact %.5f (z = %.2f)", res.Names[j], e.P, e.MCSE, ex.PIP[j], z)
		}
		rb += e.MCSE * e.MCSE
		freq += res.PIP[j].MCSE * res.PIP[j].MCSE
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
	for j, e := range m.PIPRaoBlackwell {
		if d := math.Abs(e.P - res.PIPRaoBlackwell[j].P); d > 1e-12 {
			t.Errorf("%s: merged RB PIP %v, whole run %v", res.Names[j], e.P, res.PIPRaoBlackwell[j].P)
		}
	}
}
