//go:build unix

package flows

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/checks"
)

// TestTrainingTimes measures wall-clock training times and fit quality at
// the sizes of the paper's experiments. It is slow and timing-dependent, so
// it runs only on request:
//
//	TRJ_FLOW_TIMING=eval,sas,fa go test ./flows -run TrainingTimes -v -timeout 60m
func TestTrainingTimes(t *testing.T) {
	which := os.Getenv("TRJ_FLOW_TIMING")
	if which == "" {
		t.Skip("set TRJ_FLOW_TIMING=eval,sas,fa (any of them) to run")
	}
	if strings.Contains(which, "eval") {
		// CPU cost per single-point evaluation and training throughput per
		// CPU-second, the quantities of bench/flow_test.go, measured in CPU
		// time so that a loaded machine does not distort them.
		for _, n := range []int{2, 6, 21} {
			x := checks.CorrelatedGaussian(n, 1024, uint64(n))
			o := DefaultTrainOptions()
			o.Iterations = 8
			o.BatchSize = 128
			o.Seed = 1
			c0 := cpuTime()
			f, _, err := FitRQMA(context.Background(), x, PaperRQMAConfig(), o)
			cpu := cpuTime() - c0
			if err != nil {
				t.Fatal(err)
			}
			z := make([]float64, n)
			th := make([]float64, n)
			reps := 200000 / (n * n)
			c0 = cpuTime()
			for i := 0; i < reps; i++ {
				f.Forward(x[i%len(x)], z)
			}
			fwd := (cpuTime() - c0) / time.Duration(reps)
			c0 = cpuTime()
			for i := 0; i < reps; i++ {
				f.Inverse(x[i%len(x)], th)
			}
			inv := (cpuTime() - c0) / time.Duration(reps)
			t.Logf("n=%d: one epoch of 1024 samples (8 steps of 128) %.0f samples per CPU-second; Forward %v, Inverse %v CPU per point",
				n, 1024/cpu.Seconds(), fwd, inv)
		}
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
					c0 := cpuTime()
					f, rep, err := FitRQMA(context.Background(), x, PaperRQMAConfig(), o)
					cpu := cpuTime() - c0
					if err != nil {
						t.Fatal(err)
					}
					d := make([]float64, len(held))
					for r, th := range held {
						lq, _ := f.LogDensity(th)
						d[r] = tc.s.logPDF(th) - lq
					}
					m, sd := stat.MeanStdDev(d, nil)
					t.Logf("SAS %s N=%d lr=%g: %d iterations in %.2fs wall, %.2fs CPU; held-out gap to exact %.4f ± %.4f nats",
						tc.name, rows, lr, rep.Iterations, rep.Elapsed.Seconds(), cpu.Seconds(), m, sd/math.Sqrt(float64(len(d))))
				}
			}
		}
	}
	if strings.Contains(which, "fa") {
		for _, n := range []int{17, 21} {
			for _, rows := range []int{2000, 16000} {
				x := checks.CorrelatedGaussian(n, rows, uint64(n*rows))
				o := faTrainOptions()
				o.Seed = 1
				c0 := cpuTime()
				_, rep, err := FitRQMA(context.Background(), x, faRQMAConfig(), o)
				cpu := cpuTime() - c0
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("FA-size n=%d N=%d: %d iterations (early stop %v) in %.2fs wall, %.2fs CPU, final validation loss %s",
					n, rows, rep.Iterations, rep.EarlyStopped, rep.Elapsed.Seconds(), cpu.Seconds(), last(rep.ValidationLoss))
				// The same sizes with early stopping off: the cost of the
				// full 3000 iterations.
				o.StopWindow = 0
				c0 = cpuTime()
				_, rep, err = FitRQMA(context.Background(), x, faRQMAConfig(), o)
				cpu = cpuTime() - c0
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("FA-size n=%d N=%d, no early stop: %d iterations in %.2fs wall, %.2fs CPU",
					n, rows, rep.Iterations, rep.Elapsed.Seconds(), cpu.Seconds())
			}
		}
	}
}

// cpuTime is the process's user plus system CPU time: on a shared machine
// it measures the work done better than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func last(v []float64) string {
	if len(v) == 0 {
		return "none"
	}
	return fmt.Sprintf("%.4f", v[len(v)-1])
}
