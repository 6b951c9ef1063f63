package scalar

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFastLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		x := math.Exp(rng.Float64()*1400 - 700)
		if got, want := FastLog(x), math.Log(x); math.Abs(got-want) > 2e-9 {
			t.Fatalf("FastLog(%v) = %v, want %v", x, got, want)
		}
	}
	for _, x := range []float64{0, -1, math.Inf(1), math.NaN(), 1e-310} {
		if v := FastLog(x); !math.IsNaN(v) {
			t.Errorf("FastLog(%v) = %v, want NaN", x, v)
		}
	}
}

func BenchmarkFastLog(b *testing.B) {
	x := 1.5
	var s float64
	for range b.N {
		s += FastLog(x)
		x += 1e-3
	}
	_ = s
}

func BenchmarkMathLog(b *testing.B) {
	x := 1.5
	var s float64
	for range b.N {
		s += math.Log(x)
		x += 1e-3
	}
	_ = s
}
