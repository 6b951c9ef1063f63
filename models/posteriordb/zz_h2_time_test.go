package posteriordb

import (
	"testing"
	"time"
)

func TestH2Timing(t *testing.T) {
	t0 := time.Now()
	m, err := HMMDrive0("")
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	u := make([]float64, m.Dim())
	g := make([]float64, m.Dim())
	for i := 0; i < 100; i++ {
		m.LogDensityGrad(u, g)
	}
	t.Logf("build %v, 100 grads %v", t1.Sub(t0), time.Since(t1))
}
