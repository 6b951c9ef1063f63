package bench

import (
	"context"
	"testing"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/factor"
	"github.com/trjgo/trj/models/robustvs"
)

// BenchmarkSMC/<model> times one adaptive-tempering SMC pilot (1000
// particles, the paper's settings) of the 2-factor model and of the full
// variable-selection model (1,1,1,1); ns/op is one run. It reports the
// run's log evidence (log-evidence, a check that runs agree) and its
// log-density evaluations (evals/op) and CPU seconds (cpu-s/op).
func BenchmarkSMC(b *testing.B) {
	b.Run("factor-k2", func(b *testing.B) {
		y, err := factor.DefaultData()
		if err != nil {
			b.Fatal(err)
		}
		f, err := factor.TemperedFactory(y, 2)
		if err != nil {
			b.Fatal(err)
		}
		benchSMC(b, f)
	})
	b.Run("robustvs-1111", func(b *testing.B) {
		d, err := robustvs.DefaultData()
		if err != nil {
			b.Fatal(err)
		}
		f, err := robustvs.TemperedFactory(d, []int{1, 1, 1, 1})
		if err != nil {
			b.Fatal(err)
		}
		benchSMC(b, f)
	})
}

func benchSMC(b *testing.B, f func(int) (kernels.TemperedModel, error)) {
	var logZ, evals float64
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := range b.N {
		r, err := kernels.RunSMC(context.Background(), f, &kernels.SMCSettings{Particles: 1000, Seed: uint64(i + 1), ESSFraction: 0.5})
		if err != nil {
			b.Fatal(err)
		}
		logZ += r.LogZ
		evals += float64(r.Evals)
	}
	b.StopTimer()
	b.ReportMetric(logZ/float64(b.N), "log-evidence")
	b.ReportMetric(evals/float64(b.N), "evals/op")
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}
