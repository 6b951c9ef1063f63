package trj_test

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj"
)

// TestCalibration checks over 20 seeds that the reported standard errors
// are the size of the errors: the z-scores (estimate − exact)/SE of every
// model must have a standard deviation in [0.7, 1.4], for the chains, the
// bridge and the balance estimate.
func TestCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("20 runs")
	}
	space, exact, err := subsetSpace(40)
	if err != nil {
		t.Fatal(err)
	}
	var zChain, zBridge, zBalance []float64
	marked := 0
	for seed := uint64(1); seed <= 20; seed++ {
		res, err := trj.Run(context.Background(), space, smallSettings(seed))
		if err != nil {
			t.Fatal(err)
		}
		for k, p := range exact {
			c := res.Chain[k]
			if c.Mixed {
				zChain = append(zChain, (c.P-p)/c.MCSE)
			}
			zBridge = append(zBridge, (res.Bridge.Normalized[k]-p)/res.Bridge.NormalizedSE[k])
			if b := res.Bridge; b.Balance != nil {
				zBalance = append(zBalance, (b.Balance[k]-p)/b.BalanceSE[k])
			}
		}
		if res.Bridge.Unreliable {
			marked++
		}
	}
	// Every run's bridge rests on enough accepted proposals: the table
	// reports the Bartolucci estimate, checked here.
	if marked > 0 {
		t.Errorf("bridge marked unreliable in %d of 20 runs", marked)
	}
	for _, z := range []struct {
		name string
		z    []float64
	}{{"chains", zChain}, {"bridge", zBridge}, {"balance", zBalance}} {
		mean, sd := stat.MeanStdDev(z.z, nil)
		t.Logf("%s: %d z-scores, mean %.2f, sd %.2f, max |z| %.2f", z.name, len(z.z), mean, sd, maxAbs(z.z))
		if sd < 0.7 || sd > 1.4 {
			t.Errorf("%s: sd of z-scores %.2f outside [0.7, 1.4]", z.name, sd)
		}
	}
}

func maxAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}
