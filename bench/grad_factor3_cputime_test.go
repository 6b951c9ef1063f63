package bench

import "testing"

// BenchmarkGradientCPU/factor3/<impl> is BenchmarkGradient/factor3 with an
// extra metric, cpu-ns/op: the process CPU time per evaluation, garbage
// collection included. On a shared machine wall-clock ns/op also counts the
// time the benchmark waits for a core; CPU time does not, so ratios between
// implementations stay meaningful under load.
func BenchmarkGradientCPU(b *testing.B) {
	b.Run("factor3", func(b *testing.B) {
		x, impls := factor3Setup(b)
		for _, name := range sortedKeys(impls) {
			f := impls[name]
			b.Run(name, func(b *testing.B) {
				grad := make([]float64, len(x))
				b.ReportAllocs()
				start := cpuSeconds()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					f(x, grad)
				}
				b.StopTimer()
				b.ReportMetric((cpuSeconds()-start)*1e9/float64(b.N), "cpu-ns/op")
			})
		}
	})
}
