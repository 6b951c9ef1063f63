package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/internal/seed"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl/diag"
)

// Stream returns the random stream of replicate i of the named stage of an
// experiment run with seed. Distinct (stage, i) pairs give independent PCG
// streams, and the same triple always gives the same stream, so replicates
// are reproducible whatever order they run in.
//
// Its second PCG word is seed.Key(stage, i) alone, not trj's derived seed
// (seed.Derive, which also mixes the run's seed in): kept so that the
// experiments' published numbers stay the same.
func Stream(s uint64, stage string, i int) *rand.Rand {
	return rand.New(rand.NewPCG(s, seed.Key(stage, i)))
}

// Parallel calls f(ctx, i) for i = 0, …, n−1 on at most GOMAXPROCS
// goroutines and returns the error of the lowest failing index; see
// parallel.For, which it calls.
func Parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	if n > 0 && f == nil {
		return errors.New("experiment: nil function")
	}
	return parallel.For(ctx, n, f)
}

// StepFunc advances one transdimensional chain by one step and returns the
// model it ended in and the step's RJInfo. It wraps the Step method of a
// kernels.TRJ, CTRJ or IndependenceRJ together with the chain's state.
type StepFunc func(rng *rand.Rand) (model int, info kernels.RJInfo)

// ChainRun is the record of one transdimensional chain: the model after
// every step and its between-model jumps.
type ChainRun struct {
	// Models[i] is the model after step i+1.
	Models []int
	// NumModels is the number of models of the target.
	NumModels int
	// Jumps counts proposed between-model moves, Accepted the accepted
	// ones, and AcceptSum the sum of their acceptance probabilities.
	Jumps, Accepted int
	AcceptSum       float64
	// Records holds every proposed jump when RunChain was asked to keep
	// them (for a bridge estimate from the chain itself).
	Records []kernels.JumpRecord
}

// progressEvery is the number of steps between progress callbacks of a
// chain; callbacks are cheap but not free.
const progressEvery = 100

// RunChain runs steps steps of a chain on a target with numModels models.
// progress, if non-nil, is called with the number of steps done since its
// last call (it must be safe for concurrent use when chains run in
// parallel). keepRecords keeps every JumpRecord. RunChain stops with ctx's
// error when ctx is cancelled.
func RunChain(ctx context.Context, rng *rand.Rand, steps, numModels int, step StepFunc, keepRecords bool, progress func(n int)) (*ChainRun, error) {
	if steps < 1 {
		return nil, fmt.Errorf("experiment: %d steps, need at least 1", steps)
	}
	if numModels < 1 {
		return nil, fmt.Errorf("experiment: %d models", numModels)
	}
	if step == nil {
		return nil, errors.New("experiment: nil step function")
	}
	c := &ChainRun{Models: make([]int, steps), NumModels: numModels}
	pending := 0
	for i := range steps {
		k, info := step(rng)
		if k < 0 || k >= numModels {
			return nil, fmt.Errorf("experiment: step %d ended in model %d of %d", i, k, numModels)
		}
		c.Models[i] = k
		if info.Jumped {
			c.Jumps++
			c.AcceptSum += info.Jump.AcceptProb
			if info.JumpAccepted {
				c.Accepted++
			}
			if keepRecords {
				c.Records = append(c.Records, info.Jump)
			}
		}
		if pending++; pending == progressEvery {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if progress != nil {
				progress(pending)
			}
			pending = 0
		}
	}
	if progress != nil && pending > 0 {
		progress(pending)
	}
	return c, nil
}

// Frequencies returns the fraction of steps spent in each model: the chain's
// estimate of the posterior model probabilities.
func (c *ChainRun) Frequencies() []float64 {
	f := make([]float64, c.NumModels)
	for _, k := range c.Models {
		f[k]++
	}
	for k := range f {
		f[k] /= float64(len(c.Models))
	}
	return f
}

// Running returns the running estimate of model k's probability: entry i is
// the fraction of the first i+1 steps spent in model k.
func (c *ChainRun) Running(k int) []float64 {
	out := make([]float64, len(c.Models))
	n := 0
	for i, m := range c.Models {
		if m == k {
			n++
		}
		out[i] = float64(n) / float64(i+1)
	}
	return out
}

// MCSE returns the Monte Carlo standard error of the chain's estimate of
// model k's probability: the standard error of the mean of the indicator
// series 1{model = k}, with the effective sample size of package ppl/diag
// accounting for autocorrelation. A chain that never (or always) visits k
// gives an error wrapping diag.ErrConstant.
func (c *ChainRun) MCSE(k int) (float64, error) {
	x := make([]float64, len(c.Models))
	for i, m := range c.Models {
		if m == k {
			x[i] = 1
		}
	}
	return diag.MCSEMean([][]float64{x})
}

// AcceptanceRate is the fraction of proposed jumps accepted (NaN when none
// were proposed).
func (c *ChainRun) AcceptanceRate() float64 {
	if c.Jumps == 0 {
		return math.NaN()
	}
	return float64(c.Accepted) / float64(c.Jumps)
}

// ChainSummary is one replicate chain in a Result.
type ChainSummary struct {
	Steps              int              `json:"steps"`
	ModelProbabilities map[string]Float `json:"model_probabilities"`
	AcceptanceRate     Float            `json:"acceptance_rate"`
	// MCSE is the within-chain Monte Carlo standard error of each model
	// probability (ChainRun.MCSE; "NaN" when undefined).
	MCSE map[string]Float `json:"mcse"`
	// Running is the running estimate of each model's probability thinned
	// to at most RunningPoints points, at steps RunningSteps.
	RunningSteps []int              `json:"running_steps,omitempty"`
	Running      map[string][]Float `json:"running,omitempty"`
}

// RunningPoints bounds the number of running-estimate points a ChainSummary
// keeps, so that the JSON stays small for long chains.
const RunningPoints = 200

// MeanStderr returns the mean of x and its standard error sd/√n across
// replicates, ignoring non-finite entries; the standard error is NaN with
// fewer than two finite values.
func MeanStderr(x []float64) (mean, se float64) {
	var v []float64
	for _, a := range x {
		if !math.IsNaN(a) && !math.IsInf(a, 0) {
			v = append(v, a)
		}
	}
	switch len(v) {
	case 0:
		return math.NaN(), math.NaN()
	case 1:
		return v[0], math.NaN()
	}
	m, sd := stat.MeanStdDev(v, nil)
	return m, sd / math.Sqrt(float64(len(v)))
}

// SummarizeChains turns replicate chains into a ProposalResult: model
// probabilities are visit frequencies averaged over the chains, standard
// errors come from their spread across chains (independent replicates),
// and the acceptance rate pools every chain's jumps. labels[k] names model
// k.
func SummarizeChains(runs []*ChainRun, labels []string) (*ProposalResult, error) {
	if len(runs) == 0 {
		return nil, errors.New("experiment: no chains to summarise")
	}
	nm := len(labels)
	p := &ProposalResult{
		ModelProbabilities: map[string]Float{},
		Stderr:             map[string]Float{},
		Seconds:            map[string]Float{},
		Estimator:          "chains",
	}
	freqs := make([][]float64, nm)
	jumps, acc := 0, 0
	for c, r := range runs {
		if r == nil || r.NumModels != nm {
			return nil, fmt.Errorf("experiment: chain %d does not match %d model labels", c, nm)
		}
		f := r.Frequencies()
		cs := ChainSummary{Steps: len(r.Models), ModelProbabilities: map[string]Float{}, AcceptanceRate: Float(r.AcceptanceRate()),
			MCSE: map[string]Float{}, Running: map[string][]Float{}}
		idx := thinIndex(len(r.Models), RunningPoints)
		for _, i := range idx {
			cs.RunningSteps = append(cs.RunningSteps, i+1)
		}
		for k, l := range labels {
			freqs[k] = append(freqs[k], f[k])
			cs.ModelProbabilities[l] = Float(f[k])
			mcse, err := r.MCSE(k)
			if err != nil {
				mcse = math.NaN()
			}
			cs.MCSE[l] = Float(mcse)
			run := r.Running(k)
			th := make([]Float, len(idx))
			for j, i := range idx {
				th[j] = Float(run[i])
			}
			cs.Running[l] = th
		}
		p.Chains = append(p.Chains, cs)
		jumps += r.Jumps
		acc += r.Accepted
	}
	for k, l := range labels {
		m, se := MeanStderr(freqs[k])
		p.ModelProbabilities[l], p.Stderr[l] = Float(m), Float(se)
	}
	p.AcceptanceRate = Float(math.NaN())
	if jumps > 0 {
		p.AcceptanceRate = Float(float64(acc) / float64(jumps))
	}
	return p, nil
}

// thinIndex returns at most m indices spread evenly over [0, n), always
// including the last.
func thinIndex(n, m int) []int {
	if n <= m {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, m)
	for j := range out {
		out[j] = (j+1)*n/m - 1
	}
	return out
}
