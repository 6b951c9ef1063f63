package main

import (
	"math"
	"testing"
)

// TestUScrimeBMS checks the exact g-prior reference of UScrime against
// BMS 0.3.5 (R 4.2), printed with options(digits = 10) by
//
//	d <- read.csv("models/datasets/select/uscrime.csv")
//	m <- bms(d, mcmc = "enumerate", g = "UIP", mprior = "random", user.int = FALSE, nmodel = 2^15)
//	coef(m, exact = TRUE, order.by.pip = FALSE)
//
// (nmodel = 2^15 keeps every model: with the default 500, exact = TRUE
// averages over the best 500 only and differs by up to 0.05; exact = FALSE
// gives the numbers below too.)
func TestUScrimeBMS(t *testing.T) {
	bms := []struct {
		name          string
		pip, mean, sd float64
	}{
		{"M", 0.8524956280, 1.18284979415, 0.67287734283},
		{"So", 0.2791335897, 0.03240493167, 0.08758638668},
		{"Ed", 0.9635956345, 1.88686549228, 0.65558802555},
		{"Po1", 0.6866073193, 0.63203875843, 0.54196462457},
		{"Po2", 0.4505230241, 0.30148168534, 0.53134607655},
		{"LF", 0.2272407074, 0.08143628063, 0.33872817460},
		{"M.F", 0.2460817100, -0.18082543110, 1.01151375089},
		{"Pop", 0.3973716897, -0.02530793490, 0.04167868655},
		{"NW", 0.7009734868, 0.06963987888, 0.05761546088},
		{"U1", 0.2726925803, -0.03737896190, 0.18249364178},
		{"U2", 0.6346031787, 0.22508211835, 0.22650557406},
		{"GDP", 0.3988637635, 0.23985870830, 0.38489049028},
		{"Ineq", 0.9963274195, 1.43027157245, 0.36292849548},
		{"Prob", 0.8796041731, -0.21870831677, 0.12148353211},
		{"Time", 0.4061156148, -0.09947967753, 0.16581458723},
	}
	ref, err := uscrimeReference()
	if err != nil {
		t.Fatal(err)
	}
	for j, b := range bms {
		if ref.Names[j] != b.name {
			t.Fatalf("predictor %d is %s, BMS %s", j+1, ref.Names[j], b.name)
		}
		if d := math.Abs(ref.PIP[j] - b.pip); d > 1e-9 {
			t.Errorf("%s: PIP %.10f, BMS %.10f", b.name, ref.PIP[j], b.pip)
		}
		if d := math.Abs(ref.CoefMean[j] - b.mean); d > 1e-9*math.Max(1, math.Abs(b.mean)) {
			t.Errorf("%s: mean %.11f, BMS %.11f", b.name, ref.CoefMean[j], b.mean)
		}
		if d := math.Abs(ref.CoefSD[j] - b.sd); d > 1e-9*math.Max(1, b.sd) {
			t.Errorf("%s: sd %.11f, BMS %.11f", b.name, ref.CoefSD[j], b.sd)
		}
	}
}

// TestMC3AgainstExact checks the long-run machinery (chains, swap moves,
// Rao-Blackwellisation, batch standard errors) on UScrime, whose exact
// answer the enumeration gives: every PIP, mean and sd within 4 of its own
// standard errors.
func TestMC3AgainstExact(t *testing.T) {
	d, _, err := realData(UScrimeFile)
	if err != nil {
		t.Fatal(err)
	}
	cm, _, err := gPriorExact(d)
	if err != nil {
		t.Fatal(err)
	}
	pip, mean, sd, _ := cm.summary()
	r, err := mc3Reference(d, mc3Settings{Chains: 2, Burn: 2000, Steps: 200_000, Thin: 20, Batches: 50, Seed: 7}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var maxSE float64
	for j := range pip {
		for _, c := range []struct {
			what          string
			got, se, want float64
		}{{"PIP", r.PIP[j], r.PIPSE[j], pip[j]}, {"mean", r.Mean[j], r.MeanSE[j], mean[j]}, {"sd", r.SD[j], r.SDSE[j], sd[j]}} {
			if z := (c.got - c.want) / c.se; !(math.Abs(z) <= 4) {
				t.Errorf("x%d %s: MC³ %.5f ± %.5f, exact %.5f (z = %.2f)", j+1, c.what, c.got, c.se, c.want, z)
			}
		}
		maxSE = math.Max(maxSE, r.PIPSE[j])
	}
	if maxSE > 0.01 {
		t.Errorf("largest PIP standard error %.4f: the Rao-Blackwellised estimate should be far tighter", maxSE)
	}
	t.Logf("largest PIP SE %.5f, acceptance %.3f, visited %d, max chain z %.2f", maxSE, r.Acceptance, r.Visited, r.MaxChainZ)
}
