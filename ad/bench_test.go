package ad

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
)

// ar1Obs are fixed pseudo-random observations for the AR(1) test models.
func ar1Obs(n int) []float64 {
	rng := rand.New(rand.NewPCG(21, 22))
	y := make([]float64, n)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	return y
}

// ar1Graph is a latent AR(1) model over n steps, written as an unrolled
// scalar recursion:
//
//	x_t ~ normal(φ·x_{t−1}, e^λ)  (t ≥ 1),  y_t ~ normal(x_t, 1),
//
// with the y_t scalar constants. With slice true the states are one vector
// parameter x and each step takes x[t] with gorgonia.Slice, so that the
// gradient of x is the sum of n slice gradients; otherwise each state is
// its own scalar parameter and no slicing is involved. Parameters are x
// (or x_0, …, x_{n−1}), φ and λ.
func ar1Graph(n int, slice bool) graphFunc {
	y := ar1Obs(n)
	return func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		var states []*G.Node
		var wrt []*G.Node
		if slice {
			x := vec(g, "x", n)
			wrt = append(wrt, x)
			for t := 0; t < n; t++ {
				states = append(states, G.Must(G.Slice(x, G.S(t))))
			}
		} else {
			for t := 0; t < n; t++ {
				s := scalar(g, fmt.Sprintf("x%d", t))
				wrt = append(wrt, s)
				states = append(states, s)
			}
		}
		phi, lambda := scalar(g, "phi"), scalar(g, "lambda")
		wrt = append(wrt, phi, lambda)

		obs := G.Must(G.Square(G.Must(G.Sub(G.NewConstant(y[0]), states[0]))))
		var ss *G.Node
		for t := 1; t < n; t++ {
			e := G.Must(G.Sub(states[t], G.Must(G.Mul(phi, states[t-1]))))
			if ss == nil {
				ss = G.Must(G.Square(e))
			} else {
				ss = G.Must(G.Add(ss, G.Must(G.Square(e))))
			}
			obs = G.Must(G.Add(obs, G.Must(G.Square(G.Must(G.Sub(G.NewConstant(y[t]), states[t]))))))
		}
		// −½ss·e^{−2λ} − (n−1)λ − ½obs
		prec := G.Must(G.Exp(G.Must(G.Mul(G.NewConstant(-2.0), lambda))))
		lp := G.Must(G.Mul(G.NewConstant(-0.5), G.Must(G.Mul(ss, prec))))
		lp = G.Must(G.Sub(lp, G.Must(G.Mul(G.NewConstant(float64(n-1)), lambda))))
		lp = G.Must(G.Sub(lp, G.Must(G.Mul(G.NewConstant(0.5), obs))))
		return lp, wrt
	}
}

// BenchmarkSliceGradient times LogDensityGrad of the T = 200 latent AR(1)
// model written with gorgonia.Slice on a vector parameter ("slice") and,
// for comparison, with one scalar parameter per state ("scalars"). The
// cpu-ns/op metric is the process CPU time per evaluation: on a shared
// machine wall-clock ns/op also counts time spent waiting for a core.
func BenchmarkSliceGradient(b *testing.B) {
	const n = 200
	for _, slice := range []bool{true, false} {
		name := "scalars"
		if slice {
			name = "slice"
		}
		b.Run(fmt.Sprintf("%s/T=%d", name, n), func(b *testing.B) {
			g := G.NewGraph()
			out, wrt := ar1Graph(n, slice)(g)
			p, err := Compile(g, out, wrt)
			if err != nil {
				b.Fatal(err)
			}
			x := normals(rand.New(rand.NewPCG(5, 6)), p.Dim())
			grad := make([]float64, p.Dim())
			b.ReportAllocs()
			runtime.GC() // the compiler's garbage is not the program's cost
			start := processCPU(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := p.LogDensityGrad(x, grad); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if start >= 0 {
				b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
