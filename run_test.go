package trj_test

import (
	"context"
	"math"
	"testing"

	"github.com/trjgo/trj"
)

// smallSettings keep a run of the eight-model space to about a second.
func smallSettings(seed uint64) *trj.Settings {
	return &trj.Settings{
		Seed:   seed,
		Pilot:  trj.PilotSettings{Warmup: 400, Draws: 1000},
		Chains: trj.ChainSettings{Steps: 4000},
	}
}

func TestRunExact(t *testing.T) {
	space, exact, err := subsetSpace(40)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exact: %.4f", exact)
	res, err := trj.Run(context.Background(), space, smallSettings(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", res)
	for k, p := range exact {
		c := res.Chain[k]
		if !c.Mixed || math.Abs(c.P-p) > 4*c.MCSE {
			t.Errorf("model %s: chains %.4f ± %.4f, exact %.4f", res.Labels[k], c.P, c.MCSE, p)
		}
		b, se := res.Bridge.Normalized[k], res.Bridge.NormalizedSE[k]
		if math.Abs(b-p) > 4*se {
			t.Errorf("model %s: bridge %.4f ± %.4f, exact %.4f", res.Labels[k], b, se, p)
		}
	}
}
