package bench

import (
	"math/rand/v2"
	"testing"

	"github.com/trjgo/trj/models/posteriordb"
)

func init() {
	registerGradModel("eight_schools", eightSchoolsGradSetup)
}

// eightSchoolsGradSetup is the non-centred eight schools model of
// BenchmarkNUTS (10 parameters, vectors of 8): a model whose evaluation is
// mostly the dispatch of short elementwise ops.
func eightSchoolsGradSetup(tb testing.TB) ([]float64, map[string]gradImpl) {
	m, err := posteriordb.EightSchoolsNoncentered("") // the embedded data
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 1))
	x := make([]float64, m.Dim())
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x, map[string]gradImpl{"compiled": panicOnError(m.LogDensityGrad)}
}
