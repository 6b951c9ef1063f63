package posteriordb

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl/diag"
)

// lotkaVolterraReference is posteriordb's reference posterior of
// hudson_lynx_hare-lotka_volterra: means and their Monte Carlo standard
// errors from 10 chains × 1000 thinned draws of Stan's NUTS (adapt_delta
// 0.99), in posteriordb's
// reference_posteriors/summary_statistics/mean_value/mean_value/hudson_lynx_hare-lotka_volterra.json.
var lotkaVolterraReference = []struct {
	name       string
	mean, mcse float64
}{
	{"theta.1", 0.546864499783931, 0.00062626907415417},
	{"theta.2", 0.0277472877678081, 4.11604266143508e-05},
	{"theta.3", 0.800095360233122, 0.000884603225898987},
	{"theta.4", 0.0240859152534545, 3.50047668143892e-05},
	{"z_init.1", 34.0352224770469, 0.0293082761729642},
	{"z_init.2", 5.93589713368062, 0.00533872103038814},
	{"sigma.1", 0.24805686320252, 0.000439337727695207},
	{"sigma.2", 0.251016914583618, 0.000439525598676463},
}

// At the program's tolerances (relative 1e-5, absolute 1e-3) the log
// density and its gradient near the posterior mean agree with a tight
// solve to what the tolerances allow: the solution's error, a few
// thousandths of a pelt, moves the log likelihood by about 1e-3.
func TestLotkaVolterraTolerances(t *testing.T) {
	loose, err := LotkaVolterra("")
	if err != nil {
		t.Fatal(err)
	}
	tight, err := lotkaVolterra("", &ops.ODESettings{RelTol: 1e-11, AbsTol: 1e-11})
	if err != nil {
		t.Fatal(err)
	}
	u := make([]float64, loose.Dim())
	if err := loose.UnconstrainNamed(map[string][]float64{
		"theta": {0.55, 0.028, 0.80, 0.024}, "z_init": {34, 5.9}, "sigma": {0.25, 0.25},
	}, u); err != nil {
		t.Fatal(err)
	}
	gl, gt := make([]float64, len(u)), make([]float64, len(u))
	lpl, err := loose.LogDensityGrad(u, gl)
	if err != nil {
		t.Fatal(err)
	}
	lpt, err := tight.LogDensityGrad(u, gt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("log density %.8g (program's tolerances), %.8g (tight); gradients %.5g, %.5g", lpl, lpt, gl, gt)
	if math.Abs(lpl-lpt) > 1e-2 {
		t.Errorf("log density %v at the program's tolerances, %v tight", lpl, lpt)
	}
	for i := range gl {
		if math.Abs(gl[i]-gt[i]) > 1e-2*(1+math.Abs(gt[i])) {
			t.Errorf("gradient[%d] %v at the program's tolerances, %v tight", i, gl[i], gt[i])
		}
	}
}

// NUTS on the Lotka–Volterra posterior, at the program's tolerances,
// against posteriordb's reference means: each difference within 4
// standard errors (ours and the reference's combined).
func TestNUTSLotkaVolterra(t *testing.T) {
	if testing.Short() {
		t.Skip("NUTS through an ODE solve: about 15 CPU-seconds; skipped with -short")
	}
	m, err := LotkaVolterra("")
	if err != nil {
		t.Fatal(err)
	}
	cols := sampleNUTS(t, m, 2, 500, 300, 17)
	for _, r := range lotkaVolterraReference {
		x := cols[r.name]
		var all []float64
		for _, c := range x {
			all = append(all, c...)
		}
		mean := floats.Sum(all) / float64(len(all))
		mcse, err := diag.MCSEMean(x)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		rhat, err := diag.Rhat(x)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if rhat > 1.05 {
			t.Errorf("%s: R̂ = %.3f: the chains have not mixed", r.name, rhat)
		}
		se := math.Hypot(mcse, r.mcse)
		t.Logf("%s: mean %.5g ± %.2g, posteriordb %.5g ± %.2g, z = %.2f", r.name, mean, mcse, r.mean, r.mcse, (mean-r.mean)/se)
		if !(math.Abs(mean-r.mean) <= 4*se) {
			t.Errorf("%s: mean %.5g, posteriordb %.5g, |diff| > 4·SE = %.3g", r.name, mean, r.mean, 4*se)
		}
	}
}
