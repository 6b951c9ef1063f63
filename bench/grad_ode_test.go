package bench

import (
	"testing"

	"github.com/trjgo/trj/models/posteriordb"
)

func init() {
	registerGradModel("lotka_volterra", lotkaVolterraGradSetup)
}

// lotkaVolterraGradSetup is posteriordb's Lotka–Volterra model of the
// Hudson's Bay pelts (8 parameters; an ODE solve of 2 states with their 12
// sensitivities over 20 years at the program's tolerances, relative 1e-5
// and absolute 1e-3) at posteriordb's reference posterior mean, where NUTS
// spends its gradients. The cost is the solve's: Stan's figure for the same
// program is in bench/README.md.
func lotkaVolterraGradSetup(tb testing.TB) ([]float64, map[string]gradImpl) {
	m, err := posteriordb.LotkaVolterra("") // the embedded data
	if err != nil {
		tb.Fatal(err)
	}
	x := make([]float64, m.Dim())
	if err := m.UnconstrainNamed(map[string][]float64{
		"theta": {0.5469, 0.02775, 0.8001, 0.02409}, "z_init": {34.04, 5.936}, "sigma": {0.2481, 0.2510},
	}, x); err != nil {
		tb.Fatal(err)
	}
	return x, map[string]gradImpl{"compiled": panicOnError(m.LogDensityGrad)}
}
