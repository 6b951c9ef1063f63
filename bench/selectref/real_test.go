package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trjgo/trj/models/datasets"
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

// TestLogisticISMoments checks the importance-sampling posterior means and
// second moments of an intercept-and-slope model whose intercept prior is
// not centred at zero (the Pima prior's N(logit ȳ, 10²)) against a
// two-dimensional midpoint rule, with standard errors from ten replicates.
func TestLogisticISMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n = 60
	m := &logitModel{n: n, d: 2, x: make([]float64, 2*n), y: make([]float64, n), prec: []float64{1.0 / 100, 1.0 / 6.25}, m0: -0.8}
	for i := range n {
		x := r.NormFloat64()
		m.x[2*i], m.x[2*i+1] = 1, x
		if r.Float64() < 1/(1+math.Exp(-(-0.6+0.9*x))) {
			m.y[i] = 1
		}
	}
	mu, _, err := m.mode()
	if err != nil {
		t.Fatal(err)
	}
	// Midpoint rule over ±3 around the mode (posterior sds are about 0.3).
	const k = 200
	eta := make([]float64, n)
	var z, m1a, m1b, m2a, m2b float64
	h := 6.0 / k
	for a := range k {
		for b := range k {
			beta := []float64{mu[0] - 3 + (float64(a)+0.5)*h, mu[1] - 3 + (float64(b)+0.5)*h}
			w := math.Exp(m.logPost(beta, eta) - m.logPost(mu, eta))
			z += w
			m1a += w * beta[0]
			m1b += w * beta[1]
			m2a += w * beta[0] * beta[0]
			m2b += w * beta[1] * beta[1]
		}
	}
	want := []float64{m1a / z, m1b / z, m2a / z, m2b / z}
	const reps = 10
	got := make([][]float64, reps)
	for i := range reps {
		est, err := m.logEvidenceIS(isSettings{Draws: 2000, Nu: 5}, rand.New(rand.NewPCG(23, uint64(i))))
		if err != nil {
			t.Fatal(err)
		}
		got[i] = []float64{est.mean[0], est.mean[1], est.m2[0], est.m2[1]}
	}
	for q, w := range want {
		var mean, v float64
		for _, g := range got {
			mean += g[q] / reps
		}
		for _, g := range got {
			v += (g[q] - mean) * (g[q] - mean) / (reps - 1) / reps
		}
		if z := (mean - w) / math.Sqrt(v); !(math.Abs(z) <= 4) {
			t.Errorf("moment %d: IS %.6f ± %.6f, quadrature %.6f (z = %.2f)", q, mean, math.Sqrt(v), w, z)
		}
	}
}

// TestStoredUScrimeReference checks that the stored UScrime reference is
// this program's enumeration.
func TestStoredUScrimeReference(t *testing.T) {
	b, err := datasets.ReadFile("select/" + UScrimeRef)
	if err != nil {
		t.Fatal(err)
	}
	var stored Reference
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	ref, err := uscrimeReference()
	if err != nil {
		t.Fatal(err)
	}
	for j := range ref.PIP {
		if math.Abs(stored.PIP[j]-ref.PIP[j]) > 1e-12 || math.Abs(stored.CoefMean[j]-ref.CoefMean[j]) > 1e-12 || math.Abs(stored.CoefSD[j]-ref.CoefSD[j]) > 1e-12 {
			t.Errorf("%s: stored (%v, %v, %v), computed (%v, %v, %v); run go run ./bench/selectref -real uscrime",
				ref.Names[j], stored.PIP[j], stored.CoefMean[j], stored.CoefSD[j], ref.PIP[j], ref.CoefMean[j], ref.CoefSD[j])
		}
	}
}

// TestStoredPimaPrior checks that the stored Pima reference was computed
// under the prior this program states (intercept centred at logit ȳ).
func TestStoredPimaPrior(t *testing.T) {
	b, err := datasets.ReadFile("select/" + PimaRef)
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		Prior map[string]any `json:"prior"`
		N     int            `json:"n"`
	}
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	d, _, err := realData(PimaFile)
	if err != nil {
		t.Fatal(err)
	}
	pr := pimaPrior(d.y)
	if stored.N != len(d.y) || stored.Prior["s0"] != pr.S0 || stored.Prior["s"] != pr.S || math.Abs(stored.Prior["intercept_mean"].(float64)-pr.M0) > 1e-15 {
		t.Errorf("stored n %d prior %v; want n %d and %+v", stored.N, stored.Prior, len(d.y), pr)
	}
}
