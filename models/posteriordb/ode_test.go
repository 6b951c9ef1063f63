package posteriordb

import (
	"math"
	"testing"

	"github.com/trjgo/trj/ad/ops"
)

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
