package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/checks"
)

// flowDims are the flow benchmark sizes: the SAS target (2), a mid-size
// model (6) and the largest factor-analysis model (21).
var flowDims = []int{2, 6, 21}

// BenchmarkFlowTrain times one epoch of RQMA training in the paper's
// configuration: 1024 samples in minibatches of 128 (8 Adam steps, 2
// workers), and reports training throughput in samples per second of wall
// time and per CPU-second. graph is package flows (a gorgonia graph compiled
// by ad); hand is the frozen hand-written reverse mode of flowhand_test.go.
func BenchmarkFlowTrain(b *testing.B) { benchmarkFlowTrain(b, 8, flowDims) }

// BenchmarkFlowTrainLong is BenchmarkFlowTrain with 64 Adam steps per fit
// instead of 8, for the small flows, whose cost per fit otherwise includes a
// large share of set-up (the graph path compiles its loss once per fit).
func BenchmarkFlowTrainLong(b *testing.B) { benchmarkFlowTrain(b, 64, flowDims[:2]) }

// The graph-cache cases share one flows.TrainCache across their fits, so
// that after the warm-up fit none compiles its loss.
func benchmarkFlowTrain(b *testing.B, steps int, dims []int) {
	const rows, batch = 1024, 128
	for _, impl := range []string{"graph", "graph-cache", "hand"} {
		for _, n := range dims {
			b.Run(fmt.Sprintf("%s/n=%d", impl, n), func(b *testing.B) {
				x := checks.CorrelatedGaussian(n, rows, uint64(n))
				var cache *flows.TrainCache
				if impl == "graph-cache" {
					cache = flows.NewTrainCache()
				}
				fit := func() error { // DoubleAt from 250 on: a constant batch
					if impl == "hand" {
						opts := flows.DefaultTrainOptions()
						opts.Iterations = steps
						opts.BatchSize = batch
						opts.Seed = 1
						_, _, err := handFitRQMA(x, flows.PaperRQMAConfig(), opts)
						return err
					}
					opts := flows.DefaultTrainOptions()
					opts.Iterations = steps
					opts.BatchSize = batch
					opts.Seed = 1
					opts.Cache = cache
					_, _, err := flows.FitRQMA(context.Background(), x, flows.PaperRQMAConfig(), opts)
					return err
				}
				if err := fit(); err != nil { // warm-up: compile caches, page faults
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuSeconds()
				for i := 0; i < b.N; i++ {
					if err := fit(); err != nil {
						b.Fatal(err)
					}
				}
				cpu := cpuSeconds() - cpu0
				b.ReportMetric(float64(steps*batch*b.N)/b.Elapsed().Seconds(), "samples/s")
				b.ReportMetric(float64(steps*batch*b.N)/cpu, "samples/cpu-s")
			})
		}
	}
}

// point is one flow's single-point evaluation.
type point interface {
	Forward(theta, z []float64) (float64, error)
	Inverse(z, theta []float64) (float64, error)
}

// BenchmarkFlowEval times single-point Forward (θ → z) and Inverse (z → θ)
// of an RQMA flow in the paper's configuration, graph (package flows) and
// hand (the frozen copy), trained alike; both must not allocate. cpu-ns/op
// is the process's CPU time per call, steadier than ns/op on a shared
// machine. (Package flows runs both directions as compiled forward-only
// graphs; its inverse inverts each layer with one op that computes one
// degree block of hidden units per coordinate.)
func BenchmarkFlowEval(b *testing.B) {
	for _, impl := range []string{"graph", "hand"} {
		for _, n := range flowDims {
			x := checks.CorrelatedGaussian(n, 512, uint64(n))
			opts := flows.DefaultTrainOptions()
			opts.Iterations = 20
			opts.Seed = 1
			var f point
			var err error
			if impl == "hand" {
				f, _, err = handFitRQMA(x, flows.PaperRQMAConfig(), opts)
			} else {
				f, _, err = flows.FitRQMA(context.Background(), x, flows.PaperRQMAConfig(), opts)
			}
			if err != nil {
				b.Fatal(err)
			}
			theta := append([]float64(nil), x[0]...)
			z := make([]float64, n)
			b.Run(fmt.Sprintf("%s/forward/n=%d", impl, n), func(b *testing.B) { benchMap(b, f.Forward, theta, z) })
			f.Forward(theta, z)
			out := make([]float64, n)
			b.Run(fmt.Sprintf("%s/inverse/n=%d", impl, n), func(b *testing.B) { benchMap(b, f.Inverse, z, out) })
		}
	}
}

// benchMap times one evaluation of a flow's map, out = f(in), with
// allocations and cpu-ns/op.
func benchMap(b *testing.B, f func(in, out []float64) (float64, error), in, out []float64) {
	b.ReportAllocs()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, err := f(in, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
}
