package bench

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/models/factor"
	"github.com/trjgo/trj/models/robustvs"
	"github.com/trjgo/trj/models/sas"
)

// trjExperiment is one experiment of BenchmarkTRJ: its proposal types, in
// the order of its package, and the function timing one of them.
type trjExperiment struct {
	name      string
	proposals []string
	run       func(b *testing.B, proposal string)
}

// trjExperiments lists the experiments of BenchmarkTRJ in the paper's
// order. It is a function, not a variable, so that nothing global is
// mutable; the names it yields are stable across runs, as benchstat needs.
func trjExperiments() []trjExperiment {
	return []trjExperiment{
		{"sas", sas.ProposalTypes(), benchSAS},
		{"factor", factor.ProposalTypes(), benchFactor},
		{"robustvs", robustvs.ProposalTypes(), benchRobustVS},
	}
}

// BenchmarkTRJ/<experiment>/<proposal> times each of the paper's
// transdimensional experiments end to end for one proposal type, from
// nothing to a model-probability estimate: ns/op is that wall time. Every
// case reports
//
//   - abs-err: the absolute error of the timed estimate against the
//     known truth (for robustvs, the largest over the four models);
//   - bridge-sd: the standard deviation of repeated Bartolucci bridge
//     estimates (for robustvs, the largest over the four models);
//   - cpu-s/op: process CPU seconds per iteration, which the other
//     processes of a shared machine inflate less than ns/op.
//
// Run once: go test ./bench/ -run XXX -bench TRJ -benchtime=1x. The factor
// and robustvs cases use the paper's data embedded in package datasets.
func BenchmarkTRJ(b *testing.B) {
	for _, e := range trjExperiments() {
		b.Run(e.name, func(b *testing.B) {
			for _, p := range e.proposals {
				b.Run(p, func(b *testing.B) { e.run(b, p) })
			}
		})
	}
}

// paperSASSeconds is the wall time the paper's Python needs for each SAS
// proposal type to reach a model-probability estimate: training the two RQMA
// flows (43 s + 191 s) plus the lower end of a 10⁴-step chain (70 s); the
// affine and exact transports need no training.
var paperSASSeconds = map[string]float64{
	experiment.ProposalExact:  70,
	experiment.ProposalAffine: 70,
	experiment.ProposalRQMA:   43 + 191 + 70,
}

// benchSAS times the SAS experiment (§4.2) for one proposal type through
// sas.Target.Run (one trj.Run): 5000 exact training draws per model,
// fitting the transports (RQMA with the shortened schedule of
// sas.DefaultConfig), the bridge estimate from 20 evaluation sets
// of 2000 exact draws per model, and one 10⁴-step TRJ chain, whose visit
// frequency is the estimate of π(k=2) (truth 0.75). Besides the common
// metrics it reports
//
//   - bridge-sd: the spread of the 20 evaluation sets' bridge estimates
//     in the last iteration;
//   - chain-s/op: wall seconds of the chain alone;
//   - x-paper: the paper's wall time for the same estimate divided by
//     ours, and x-paper-cpu the same against our CPU time.
func benchSAS(b *testing.B, kind string) {
	tg := sas.Paper()
	truth := tg.ModelProb(1)
	cfg := sas.DefaultConfig()
	cfg.Proposals = []string{kind}
	cfg.Chains = 1
	cfg.Steps = 10000
	cfg.ScatterSources = 0
	ctx := context.Background()
	var bridge []float64
	errSum, chainSec := 0.0, 0.0
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := range b.N {
		cfg.Seed = uint64(i + 1)
		res, err := tg.Run(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		p := res.Proposals[kind]
		chainSec += float64(p.Seconds[experiment.StageChains])
		errSum += math.Abs(float64(p.ModelProbabilities["2"]) - truth)
		bridge = res.Bridge[kind]
	}
	b.StopTimer()
	cpu := (cpuSeconds() - cpu0) / float64(b.N)
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(errSum/float64(b.N), "abs-err")
	b.ReportMetric(stat.StdDev(bridge, nil), "bridge-sd")
	b.ReportMetric(cpu, "cpu-s/op")
	b.ReportMetric(chainSec/float64(b.N), "chain-s/op")
	b.ReportMetric(paperSASSeconds[kind]/perOp, "x-paper")
	b.ReportMetric(paperSASSeconds[kind]/cpu, "x-paper-cpu")
}

// benchFactor times the factor-analysis experiment (§4.3) for one
// proposal type through trj.Run: SMC pilots of 1000 particles per model
// and set in 10 runs each (with NUTS refresh moves), fitting the proposal
// (the shortened RQMA schedule of factor.DefaultConfig), the bridge
// estimate of π(2 factors) from the 10 evaluation groups (truth 0.88,
// Lopes and West) and a token chain of 4 steps. bridge-sd is the spread of
// the 10 groups' own estimates.
func benchFactor(b *testing.B, kind string) {
	cfg := factor.DefaultConfig()
	cfg.Proposals = []string{kind}
	cfg.PilotDraws = 1000
	cfg.Chains, cfg.Steps = 1, 4
	cfg.BridgeReplicates = 10
	cfg.ScatterSources = 0
	benchBridgeRuns(b, func(seed uint64) (sd, absErr float64, err error) {
		cfg.Seed = seed
		res, err := factor.Run(context.Background(), cfg)
		if err != nil {
			return 0, 0, err
		}
		br := res.Proposals[kind].Bridge
		return float64(br.SD["2"]), math.Abs(float64(br.Normalized["2"]) - factor.Truth2), nil
	})
}

// benchRobustVS times the robust variable-selection experiment (§5.1) for
// one proposal type: SMC pilots of 1000 particles per model split into
// training and evaluation halves, fitting, and 10 bridge estimates of the
// four model probabilities, whose means are the estimate (truth:
// robustvs.Truth). bridge-sd is the largest spread and abs-err the largest
// error over the four models.
func benchRobustVS(b *testing.B, kind string) {
	cfg := robustvs.DefaultConfig()
	cfg.Proposals = []string{kind}
	cfg.PilotDraws = 1000
	cfg.BridgeReplicates = 10
	cfg.ScatterSources = 0
	truth := robustvs.Truth()
	benchBridgeRuns(b, func(seed uint64) (sd, absErr float64, err error) {
		cfg.Seed = seed
		res, err := robustvs.Run(context.Background(), cfg)
		if err != nil {
			return 0, 0, err
		}
		br := res.Proposals[kind].Bridge
		for k, l := range robustvs.Labels() {
			sd = math.Max(sd, float64(br.SD[l]))
			absErr = math.Max(absErr, math.Abs(float64(br.Normalized[l])-truth[k]))
		}
		return sd, absErr, nil
	})
}

// benchBridgeRuns times run with seeds 1 … b.N and reports the means of
// the bridge-sd and abs-err it returns, and cpu-s/op.
func benchBridgeRuns(b *testing.B, run func(seed uint64) (sd, absErr float64, err error)) {
	var sdSum, errSum float64
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := range b.N {
		sd, absErr, err := run(uint64(i + 1))
		if err != nil {
			b.Fatal(err)
		}
		sdSum += sd
		errSum += absErr
	}
	b.StopTimer()
	b.ReportMetric(errSum/float64(b.N), "abs-err")
	b.ReportMetric(sdSum/float64(b.N), "bridge-sd")
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}

// TestTRJCases checks that BenchmarkTRJ covers the three experiments with
// every proposal type of each under unique names that benchstat can match
// from run to run (no slashes or spaces inside a name element).
func TestTRJCases(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range trjExperiments() {
		if len(e.proposals) == 0 || e.run == nil {
			t.Errorf("experiment %q has no proposals or no benchmark", e.name)
		}
		for _, p := range append([]string{e.name}, e.proposals...) {
			for _, r := range p {
				if r == '/' || r == ' ' || r == '\t' {
					t.Errorf("name element %q contains %q", p, r)
				}
			}
		}
		for _, p := range e.proposals {
			name := e.name + "/" + p
			if seen[name] {
				t.Errorf("duplicate case %s", name)
			}
			seen[name] = true
		}
	}
	for _, want := range []string{"sas/exact", "sas/affine", "sas/rqma", "factor/rqma", "robustvs/crqma"} {
		if !seen[want] {
			t.Errorf("BenchmarkTRJ lacks %s; have %v", want, sortedKeys(seen))
		}
	}
}
