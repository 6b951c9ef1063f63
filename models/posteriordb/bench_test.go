package posteriordb

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkLogDensityGrad times one value-and-gradient evaluation of each
// gallery model at a random point.
func BenchmarkLogDensityGrad(b *testing.B) {
	for _, m := range gallery {
		b.Run(m.name, func(b *testing.B) {
			model, err := m.build("")
			if err != nil {
				b.Fatal(err)
			}
			u := make([]float64, model.Dim())
			if err := model.Init(rand.New(rand.NewPCG(1, 2)), u); err != nil {
				b.Fatal(err)
			}
			for i := range u {
				u[i] /= 4
			}
			grad := make([]float64, len(u))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := model.LogDensityGrad(u, grad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
