package bench

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/factor"
	"github.com/trjgo/trj/models/robustvs"
)

// Data files of the factor-analysis and variable-selection benchmarks,
// relative to this package.
const (
	factorData   = "../" + factor.DefaultDataPath
	robustvsData = "../" + robustvs.DefaultDataPath
)

// trjCases are sub-benchmarks of BenchmarkTRJ contributed by other files,
// keyed by their path below it ("factor/rqma"). BenchmarkTRJ (trj_test.go)
// runs them through runTRJCases; it is written only at initialisation.
var trjCases = map[string]func(b *testing.B){}

func init() {
	for _, kind := range factor.ProposalTypes() {
		trjCases["factor/"+kind] = func(b *testing.B) { benchFactor(b, kind) }
	}
	for _, kind := range robustvs.ProposalTypes() {
		trjCases["robustvs/"+kind] = func(b *testing.B) { benchRobustVS(b, kind) }
	}
}

// runTRJCases runs the registered sub-benchmarks of BenchmarkTRJ in name
// order, grouped by experiment (b.Run("factor", …) then the proposal).
func runTRJCases(b *testing.B) {
	groups := map[string][]string{}
	for name := range trjCases {
		var exp, kind string
		for i := range name {
			if name[i] == '/' {
				exp, kind = name[:i], name[i+1:]
				break
			}
		}
		groups[exp] = append(groups[exp], kind)
	}
	var exps []string
	for e := range groups {
		exps = append(exps, e)
	}
	sort.Strings(exps)
	for _, e := range exps {
		kinds := groups[e]
		sort.Strings(kinds)
		b.Run(e, func(b *testing.B) {
			for _, k := range kinds {
				b.Run(k, trjCases[e+"/"+k])
			}
		})
	}
}

// BenchmarkTRJExperiments runs the factor-analysis and variable-selection
// cases of BenchmarkTRJ until BenchmarkTRJ calls runTRJCases itself; then
// this function should be deleted.
func BenchmarkTRJExperiments(b *testing.B) { runTRJCases(b) }

// benchFactor times the factor-analysis experiment end to end for one
// proposal type, up to its model-probability estimate: SMC pilots of
// 1000 particles per model and set (with rejuvenation), fitting the
// proposal (the default shortened RQMA schedule) and 10 Bartolucci bridge
// estimates of π(2 factors) from 1000 evaluation draws per model. It
// reports bridge-sd (the spread of the 10 estimates), abs-err (|mean −
// 0.88|), and the CPU seconds per iteration.
func benchFactor(b *testing.B, kind string) {
	cfg := factor.DefaultConfig()
	cfg.DataPath = factorData
	cfg.Proposals = []string{kind}
	cfg.PilotDraws = 1000
	cfg.Chains, cfg.Steps = 0, 0
	cfg.BridgeReplicates = 10
	cfg.ScatterSources = 0
	var sd, errSum float64
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := range b.N {
		cfg.Seed = uint64(i + 1)
		res, err := factor.Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		br := res.Proposals[kind].Bridge
		sd += float64(br.SD["2"])
		errSum += math.Abs(float64(br.Normalized["2"]) - factor.Truth2)
	}
	b.StopTimer()
	b.ReportMetric(sd/float64(b.N), "bridge-sd")
	b.ReportMetric(errSum/float64(b.N), "abs-err")
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}

// benchRobustVS is benchFactor for the variable-selection experiment:
// SMC pilots of 1000 particles per model split into halves, fitting, and
// 10 bridge estimates; bridge-sd is the largest spread over the four
// model probabilities and abs-err the largest |mean − reference|.
func benchRobustVS(b *testing.B, kind string) {
	cfg := robustvs.DefaultConfig()
	cfg.DataPath = robustvsData
	cfg.Proposals = []string{kind}
	cfg.PilotDraws = 1000
	cfg.BridgeReplicates = 10
	cfg.ScatterSources = 0
	truth := robustvs.Truth()
	var sd, errMax float64
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := range b.N {
		cfg.Seed = uint64(i + 1)
		res, err := robustvs.Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		br := res.Proposals[kind].Bridge
		s, e := 0.0, 0.0
		for k, l := range robustvs.Labels() {
			s = math.Max(s, float64(br.SD[l]))
			e = math.Max(e, math.Abs(float64(br.Normalized[l])-truth[k]))
		}
		sd += s
		errMax += e
	}
	b.StopTimer()
	b.ReportMetric(sd/float64(b.N), "bridge-sd")
	b.ReportMetric(errMax/float64(b.N), "abs-err")
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}

// BenchmarkSMC times one adaptive-tempering SMC pilot (1000 particles,
// the paper's settings) of the 2-factor model and of the full
// variable-selection model (1,1,1,1), reporting its log evidence and
// log-density evaluations per run.
func BenchmarkSMC(b *testing.B) {
	b.Run("factor-k2", func(b *testing.B) {
		y, err := factor.LoadData(factorData)
		if err != nil {
			b.Fatal(err)
		}
		f, err := factor.TemperedFactory(y, 2)
		if err != nil {
			b.Fatal(err)
		}
		benchSMC(b, f)
	})
	b.Run("robustvs-1111", func(b *testing.B) {
		d, err := robustvs.LoadData(robustvsData)
		if err != nil {
			b.Fatal(err)
		}
		f, err := robustvs.TemperedFactory(d, []int{1, 1, 1, 1})
		if err != nil {
			b.Fatal(err)
		}
		benchSMC(b, f)
	})
}

func benchSMC(b *testing.B, f func(int) (kernels.TemperedModel, error)) {
	var logZ, evals float64
	b.ResetTimer()
	for i := range b.N {
		r, err := kernels.RunSMC(context.Background(), f, &kernels.SMCSettings{Particles: 1000, Seed: uint64(i + 1)})
		if err != nil {
			b.Fatal(err)
		}
		logZ += r.LogZ
		evals += float64(r.Evals)
	}
	b.ReportMetric(logZ/float64(b.N), "log-evidence")
	b.ReportMetric(evals/float64(b.N), "evals/op")
}
