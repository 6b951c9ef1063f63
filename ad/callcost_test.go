package ad

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
)

// BenchmarkCallOverhead times LogDensityGrad of a 21-dimensional standard
// normal, the call cost that dominates small models, with the caller's
// buffers fixed ("same") or alternating between two pairs ("alternate", as
// NUTS's trajectory states do).
func BenchmarkCallOverhead(b *testing.B) {
	g := G.NewGraph()
	x := vec(g, "x", 21)
	sq := G.Must(G.Sum(G.Must(G.Square(x))))
	out := G.Must(G.Sub(G.Must(G.Mul(G.NewConstant(-0.5), sq)), G.NewConstant(21*0.5*math.Log(2*math.Pi))))
	p, err := Compile(g, out, []*G.Node{x})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	xs := [2][]float64{normals(rng, 21), normals(rng, 21)}
	gs := [2][]float64{make([]float64, 21), make([]float64, 21)}
	for _, alt := range []bool{false, true} {
		name := "same"
		if alt {
			name = "alternate"
		}
		b.Run(name, func(b *testing.B) {
			start := processCPU(b)
			for i := 0; i < b.N; i++ {
				j := 0
				if alt {
					j = i & 1
				}
				if _, err := p.LogDensityGrad(xs[j], gs[j]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
