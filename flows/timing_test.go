package flows

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestTrainingTimes measures wall-clock training times and fit quality at
// the sizes of the paper's experiments. It is slow and timing-dependent, so
// it runs only on request:
//
//	TRJ_FLOW_TIMING=sas,fa go test ./flows -run TrainingTimes -v -timeout 60m
func TestTrainingTimes(t *testing.T) {
	which := os.Getenv("TRJ_FLOW_TIMING")
	if which == "" {
		t.Skip("set TRJ_FLOW_TIMING=sas,fa to run")
	}
	if strings.Contains(which, "sas") {
		for _, tc := range []struct {
			name string
			s    *sas
		}{{"k1", sas1()}, {"k2", sas2()}} {
			for _, rows := range []int{2000, 50000} {
				for _, lr := range []float64{3e-3, 1e-2} {
					rng := rand.New(rand.NewPCG(7, uint64(rows)))
					x := tc.s.draw(rng, rows)
					held := tc.s.draw(rng, 10000)
					o := DefaultTrainOptions()
					o.LearningRate = lr
					o.Seed = 1
					f, rep, err := FitRQMA(x, PaperRQMAConfig(), o)
					if err != nil {
						t.Fatal(err)
					}
					d := make([]float64, len(held))
					for r, th := range held {
						lq, _ := f.LogDensity(th)
						d[r] = tc.s.logPDF(th) - lq
					}
					m, sd := stat.MeanStdDev(d, nil)
					t.Logf("SAS %s N=%d lr=%g: %d iterations in %.2fs; held-out gap to exact %.4f ± %.4f nats",
						tc.name, rows, lr, rep.Iterations, rep.Elapsed.Seconds(), m, sd/math.Sqrt(float64(len(d))))
				}
			}
		}
	}
	if strings.Contains(which, "fa") {
		for _, n := range []int{17, 21} {
			for _, rows := range []int{2000, 16000} {
				x := correlatedGaussian(n, rows, uint64(n*rows))
				o := FactorAnalysisTrainOptions()
				o.Seed = 1
				_, rep, err := FitRQMA(x, FactorAnalysisRQMAConfig(), o)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("FA-size n=%d N=%d: %d iterations (early stop %v) in %.2fs, final validation loss %s",
					n, rows, rep.Iterations, rep.EarlyStopped, rep.Elapsed.Seconds(), last(rep.ValidationLoss))
			}
		}
	}
}

func last(v []float64) string {
	if len(v) == 0 {
		return "none"
	}
	return fmt.Sprintf("%.4f", v[len(v)-1])
}

// correlatedGaussian draws θ_i = z_i + 0.5 z_{i−1}: synthetic stand-ins for
// posterior draws of a given size.
func correlatedGaussian(n, rows int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([][]float64, rows)
	for r := range x {
		x[r] = make([]float64, n)
		prev := 0.0
		for i := range x[r] {
			z := rng.NormFloat64()
			x[r][i] = z + 0.5*prev
			prev = z
		}
	}
	return x
}
