package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/checks"
)

// conditionalFlow fits a conditional RQMA (paper configuration, 20 Adam
// steps) on the saturated space R^n of three nested models, active on the
// first ⌈n/3⌉, ⌈2n/3⌉ and n coordinates, with one-hot contexts, and returns
// it with one draw per model.
func conditionalFlow(b *testing.B, n int) (*flows.ConditionalRQMA, [][]float64) {
	const K = 3
	spec := flows.ConditionalSpec{Active: make([][]bool, K), Contexts: make([][]float64, K)}
	for k := range K {
		spec.Active[k] = make([]bool, n)
		for i := range (n*(k+1) + K - 1) / K {
			spec.Active[k][i] = true
		}
		spec.Contexts[k] = make([]float64, K)
		spec.Contexts[k][k] = 1
	}
	draws := checks.CorrelatedGaussian(n, 600, uint64(n))
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	models := make([]int, len(draws))
	for r := range draws {
		models[r] = r % K
		for i := range draws[r] {
			if !spec.Active[models[r]][i] {
				draws[r][i] = rng.NormFloat64()
			}
		}
	}
	opts := flows.ConditionalTrainOptions()
	opts.Iterations = 20
	opts.Seed = 1
	f, _, err := flows.FitConditionalRQMA(context.Background(), spec, draws, models, flows.PaperRQMAConfig(), opts)
	if err != nil {
		b.Fatal(err)
	}
	return f, draws[:K]
}

// BenchmarkConditionalEval times single-point Forward (ξ → z) and Inverse
// (z → ξ) of a conditional RQMA flow, package flows' compiled programs:
// "one" evaluates one model throughout, "alternate" cycles through the
// three models (as a CTRJ move alternates between models, rebinding the
// model's standardisation and context). cpu-ns/op is the process's CPU
// time per call. Evaluation must not allocate.
func BenchmarkConditionalEval(b *testing.B) {
	for _, n := range flowDims {
		f, xs := conditionalFlow(b, n)
		zs := make([][]float64, len(xs))
		for k, x := range xs {
			zs[k] = make([]float64, n)
			if _, err := f.Forward(k, x, zs[k]); err != nil {
				b.Fatal(err)
			}
		}
		out := make([]float64, n)
		for _, dir := range []string{"forward", "inverse"} {
			for _, mode := range []string{"one", "alternate"} {
				b.Run(fmt.Sprintf("%s/%s/n=%d", dir, mode, n), func(b *testing.B) {
					b.ReportAllocs()
					cpu0 := cpuSeconds()
					for i := 0; i < b.N; i++ {
						k := len(xs) - 1
						if mode == "alternate" {
							k = i % len(xs)
						}
						var err error
						if dir == "forward" {
							_, err = f.Forward(k, xs[k], out)
						} else {
							_, err = f.Inverse(k, zs[k], out)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric((cpuSeconds()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}
