package bench

import (
	"context"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/posteriordb"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/diag"
)

// nutsModel is a BenchmarkNUTS target: a factory of per-chain targets and
// the map from an unconstrained draw to the quantities whose ESS counts
// (nil: the draw itself).
type nutsModel struct {
	factory   func(chain int) (kernels.Target, error)
	constrain func(chain int, u, dst []float64) error
	width     int // len(dst) of constrain
}

// nutsSetup builds a model for BenchmarkNUTS, outside the timed region.
type nutsSetup func(tb testing.TB) nutsModel

// nutsModels are the models of BenchmarkNUTS: the four on which Stan 2.21
// was timed on this machine.
var nutsModels = map[string]nutsSetup{
	"gauss21":                   programSetup(gauss21Graph),
	"logistic":                  programSetup(newLogisticData(logisticN, logisticD, 2024).graphGLM),
	"eight_schools_noncentered": eightSchoolsNUTSSetup,
	"factor3":                   factor3NUTSSetup,
}

// programSetup compiles a graph once per chain with ad.
func programSetup(build func() (*G.ExprGraph, *G.Node, []*G.Node)) nutsSetup {
	return func(tb testing.TB) nutsModel {
		g, out, wrt := build()
		p, err := ad.Compile(g, out, wrt)
		if err != nil {
			tb.Fatal(err)
		}
		return nutsModel{factory: func(int) (kernels.Target, error) { return p.Clone(), nil }, width: p.Dim()}
	}
}

func eightSchoolsNUTSSetup(tb testing.TB) nutsModel {
	m, err := posteriordb.EightSchoolsNoncentered("") // the embedded data
	if err != nil {
		tb.Fatal(err)
	}
	clones := make([]ppl.Model, 4)
	for c := range clones {
		clones[c] = m.Clone()
	}
	return nutsModel{
		factory:   func(c int) (kernels.Target, error) { return clones[c], nil },
		constrain: func(c int, u, dst []float64) error { return clones[c].Constrain(u, dst) },
		width:     len(m.ParamNames()),
	}
}

func factor3NUTSSetup(tb testing.TB) nutsModel {
	y := loadExchangeRates(tb)
	fg, err := newFactorGraph(y, 3)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := ad.Compile(fg.g, fg.logp, fg.wrt)
	if err != nil {
		tb.Fatal(err)
	}
	// The constrained parameters are exp of some coordinates: bulk ESS,
	// computed on ranks, is the same for either.
	return nutsModel{factory: func(int) (kernels.Target, error) { return p.Clone(), nil }, width: p.Dim()}
}

// BenchmarkNUTS runs NUTS as trj sample does, 4 chains of 1000 warm-up and
// 1000 kept iterations with Stan's adaptation (seed i+1 in iteration i),
// and reports
//
//	ESS/cpu-s   min bulk ESS over the parameters (Stan's constrained
//	            parameters and transformed parameters) per CPU second of
//	            the sampling phases: the chains run one after another, as
//	            rstan's with cores = 1, each alone in the process, and the
//	            process CPU clock is read when the chain's warm-up ends and
//	            when its sampling ends. rstan times its phases with the
//	            CPU clock too, so this is the figure to compare with Stan's,
//	            and CPU time does not count the waits for a core that a
//	            loaded machine adds to wall time;
//	ESS/s       the same per wall-clock second of sampling, the chains'
//	            sampling phases added up, as CmdStan's per-chain times add
//	            up;
//	grads/draw  gradient evaluations per kept draw;
//	ESS/kgrad   min bulk ESS per thousand sampling-phase gradients, a
//	            figure that does not depend on the machine's load;
//	cpu-µs/grad CPU time of sampling per gradient, and µs/grad the wall
//	            time.
//
// The chain with FirstChain c is chain c of a 4-chain run, so the draws
// are those of kernels.Sample with 4 chains in parallel. ESS is computed
// outside the timed window. Run each once, or 10 times for 10 seeds:
// go test ./bench/ -run XXX -bench NUTS -benchtime=1x.
func BenchmarkNUTS(b *testing.B) {
	for _, name := range sortedKeys(nutsModels) {
		b.Run(name, func(b *testing.B) {
			m := nutsModels[name](b)
			const chains, warmup, draws = 4, 1000, 1000
			var ess, seconds, grads, cpu float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res := &kernels.SampleResult{}
				for c := 0; c < chains; c++ {
					var cpuSampling float64
					r, err := kernels.Sample(context.Background(), m.factory, &kernels.SampleSettings{
						Chains: chains, Shard: []int{c}, Warmup: warmup, Draws: draws, Seed: uint64(i + 1),
						Progress: func(p kernels.Progress) {
							switch p.Done {
							case warmup:
								cpuSampling = cpuSeconds()
							case warmup + draws:
								cpuSampling = cpuSeconds() - cpuSampling
							}
						},
					})
					if err != nil {
						b.Fatal(err)
					}
					cpu += cpuSampling
					ch := r.Chains[0]
					seconds += ch.SampleTime.Seconds()
					grads += float64(ch.SampleGradEvals)
					res.Chains = append(res.Chains, ch)
				}
				b.StopTimer()
				e, err := minBulkESS(res, m)
				if err != nil {
					b.Fatal(err)
				}
				ess += e
				b.StartTimer()
			}
			b.ReportMetric(ess/cpu, "ESS/cpu-s")
			b.ReportMetric(ess/seconds, "ESS/s")
			b.ReportMetric(grads/float64(b.N*chains*draws), "grads/draw")
			b.ReportMetric(1000*ess/grads, "ESS/kgrad")
			b.ReportMetric(1e6*cpu/grads, "cpu-µs/grad")
			b.ReportMetric(1e6*seconds/grads, "µs/grad")
		})
	}
}

// minBulkESS is the smallest bulk ESS over the model's reported
// quantities.
func minBulkESS(res *kernels.SampleResult, m nutsModel) (float64, error) {
	cols := make([][][]float64, m.width)
	for j := range cols {
		cols[j] = make([][]float64, len(res.Chains))
	}
	dst := make([]float64, m.width)
	for c, ch := range res.Chains {
		for i := range ch.Info {
			x := ch.Draw(i)
			if m.constrain != nil {
				if err := m.constrain(c, x, dst); err != nil {
					return 0, err
				}
				x = dst
			}
			for j := range cols {
				cols[j][c] = append(cols[j][c], x[j])
			}
		}
	}
	minESS := math.Inf(1)
	for _, col := range cols {
		e, err := diag.ESSBulk(col)
		if err != nil {
			return 0, err
		}
		minESS = math.Min(minESS, e)
	}
	return minESS, nil
}

// TestNUTSBenchModels runs each BenchmarkNUTS model briefly so that the
// benchmark's setup and bookkeeping are exercised by go test.
func TestNUTSBenchModels(t *testing.T) {
	for _, name := range sortedKeys(nutsModels) {
		t.Run(name, func(t *testing.T) {
			m := nutsModels[name](t)
			res, err := kernels.Sample(context.Background(), m.factory, &kernels.SampleSettings{
				Chains: 2, Warmup: 100, Draws: 100, Seed: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			e, err := minBulkESS(res, m)
			if err != nil || !(e > 0) {
				t.Errorf("min bulk ESS %v, %v", e, err)
			}
		})
	}
}
