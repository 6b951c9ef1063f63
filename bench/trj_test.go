package bench

import (
	"context"
	"math"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/models/sas"
)

// paperSASSeconds is the wall time the paper's Python needs for each SAS
// proposal type to reach a model-probability estimate: training the two RQMA
// flows (43 s + 191 s) plus the lower end of a 10⁴-step chain (70 s); the
// affine and exact transports need no training.
var paperSASSeconds = map[string]float64{"exact": 70, "affine": 70, "rqma": 43 + 191 + 70}

// cpuSeconds is the process's user plus system CPU time, which the other
// processes on a shared machine disturb less than wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkTRJ/sas/<proposal> times the SAS experiment end to end for one
// proposal type: exact training draws, fitting the transports (RQMA
// training with the default schedule of sas.DefaultExperimentConfig) and one
// 10⁴-step TRJ chain, up to its estimate of π(k=2). It reports
//
//   - abs-err: the chain's |π̂(k=2) − 0.75|, averaged over iterations;
//   - bridge-sd: the standard deviation of 20 Bartolucci bridge estimates
//     of π(k=2) (2000 evaluation draws per model each) with the last
//     iteration's transports, computed outside the timed region;
//   - cpu-s/op: process CPU seconds per iteration;
//   - chain-s/op: wall seconds of the 10⁴-step chain alone;
//   - x-paper: the paper's wall time for the same estimate divided by ours,
//     and x-paper-cpu the same against our CPU time (which the load of a
//     shared machine inflates less than our wall time).
func BenchmarkTRJ(b *testing.B) {
	b.Run("sas", func(b *testing.B) {
		for _, kind := range []string{experiment.ProposalExact, experiment.ProposalAffine, experiment.ProposalRQMA} {
			b.Run(kind, func(b *testing.B) { benchSAS(b, kind) })
		}
	})
}

func benchSAS(b *testing.B, kind string) {
	tg := sas.Paper()
	cfg := sas.DefaultExperimentConfig()
	cfg.Chains = 1
	cfg.Steps = 10000
	ctx := context.Background()
	var set *sas.TransportSet
	errSum, chainSec := 0.0, 0.0
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := range b.N {
		cfg.Seed = uint64(i + 1)
		pilot, err := tg.ExactDraws(experiment.Stream(cfg.Seed, "pilot", 0), cfg.TrainDraws)
		if err != nil {
			b.Fatal(err)
		}
		if set, err = tg.FitTransports(ctx, kind, pilot, cfg, nil); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		runs, err := tg.RunChains(ctx, set, pilot, cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		chainSec += time.Since(start).Seconds()
		errSum += math.Abs(runs[0].Frequencies()[1] - 0.75)
	}
	b.StopTimer()
	cpu := (cpuSeconds() - cpu0) / float64(b.N)
	perOp := b.Elapsed().Seconds() / float64(b.N)
	ests, err := tg.RunBridge(ctx, set, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	vals := experiment.SummarizeBridge(ests, tg.ExperimentLabels()).Values(1)
	b.ReportMetric(errSum/float64(b.N), "abs-err")
	b.ReportMetric(stat.StdDev(vals, nil), "bridge-sd")
	b.ReportMetric(cpu, "cpu-s/op")
	b.ReportMetric(chainSec/float64(b.N), "chain-s/op")
	b.ReportMetric(paperSASSeconds[kind]/perOp, "x-paper")
	b.ReportMetric(paperSASSeconds[kind]/cpu, "x-paper-cpu")
}
