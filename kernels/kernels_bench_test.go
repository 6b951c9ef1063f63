package kernels

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

func benchGaussian(b *testing.B, d int) *gaussian {
	mean := make([]float64, d)
	sd := make([]float64, d)
	for i := range sd {
		sd[i] = 1 + float64(i%5)
	}
	return newGaussian(b, mean, diagCov(sd))
}

func BenchmarkNUTSStep(b *testing.B) {
	for _, d := range []int{10, 100} {
		b.Run("d="+strconv.Itoa(d), func(b *testing.B) {
			g := benchGaussian(b, d)
			inv := make([]float64, d)
			for i := range inv {
				inv[i] = float64((1 + i%5) * (1 + i%5))
			}
			m, _ := NewDiagMetric(inv)
			k, _ := NewNUTS(g, 0.5, m)
			s, _ := k.Init(make([]float64, d))
			rng := rand.New(rand.NewPCG(1, 0))
			leap := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var info NUTSInfo
				s, info = k.Step(rng, s)
				leap += info.NumLeapfrog
			}
			b.ReportMetric(float64(leap)/float64(b.N), "leapfrog/op")
		})
	}
}

func BenchmarkRWMStep(b *testing.B) {
	g := benchGaussian(b, 10)
	k, _ := NewRWM(g, 0.5, nil)
	s, _ := k.Init(make([]float64, 10))
	rng := rand.New(rand.NewPCG(1, 0))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s, _ = k.Step(rng, s)
	}
}
