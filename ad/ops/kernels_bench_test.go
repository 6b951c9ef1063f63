package ops

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
)

// BenchmarkKernels times the 6×6 linear-algebra kernels used by the
// factor-analysis benchmark.
func BenchmarkKernels(b *testing.B) {
	const n = 6
	rng := rand.New(rand.NewPCG(1, 1))
	a := randSPD(rng, n)
	l := make([]float64, n*n)
	if err := choleskyInto(l, a, n); err != nil {
		b.Fatal(err)
	}
	m := randVec(rng, n*n, 1)
	sq := tensor.Shape{n, n}
	cases := []struct {
		name   string
		op     lowerer
		shapes []tensor.Shape
		in     [][]float64
	}{
		{"cholesky", choleskyOp{}, []tensor.Shape{sq}, [][]float64{a}},
		{"choleskyGrad", choleskyGradOp{}, []tensor.Shape{sq, sq}, [][]float64{l, m}},
		{"logdet", logDetTriOp{}, []tensor.Shape{sq}, [][]float64{l}},
		{"logdetGrad", logDetTriGradOp{}, []tensor.Shape{sq, {}}, [][]float64{l, {1}}},
		{"solve", solveOp{lower: true, bDims: 2}, []tensor.Shape{sq, sq}, [][]float64{l, m}},
		{"solveTrans", solveOp{lower: true, trans: true, bDims: 2}, []tensor.Shape{sq, sq}, [][]float64{l, m}},
		{"triOuter", triOuterOp{lower: true, dims: 2}, []tensor.Shape{sq, sq}, [][]float64{m, m}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			k, err := c.op.Lower(c.shapes)
			if err != nil {
				b.Fatal(err)
			}
			var out []float64
			if c.name == "logdet" {
				out = make([]float64, 1)
			} else {
				out = make([]float64, n*n)
			}
			var kk ad.Kernel = k
			b.ReportAllocs()
			for b.Loop() {
				if err := kk.Eval(out, c.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
