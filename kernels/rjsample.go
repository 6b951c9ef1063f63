package kernels

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// RJKernel is what every transdimensional kernel (TRJ, CTRJ and
// IndependenceRJ) offers: one-off proposals for the bridge estimator and
// chains for SampleRJ. A kernel keeps scratch space, so each chain needs its
// own.
type RJKernel interface {
	JumpProposer
	// NumModels is the number of models K.
	NumModels() int
	// Start returns a chain at model k with parameters θ_k (copied).
	Start(rng *rand.Rand, k int, theta []float64) (RJChain, error)
}

// RJChain is a running chain of an RJKernel. Its state stays inside; Step
// moves it and says what happened.
type RJChain interface {
	// Step makes one transition.
	Step(rng *rand.Rand) RJInfo
	// Model is the current model k.
	Model() int
	// Theta writes θ_k into dst (nil allocates) and returns it.
	Theta(dst []float64) []float64
	// LogDensity is the log target at the current state.
	LogDensity() float64
}

// Start returns a TRJ chain at (k, θ); rng is unused.
func (t *TRJ) Start(_ *rand.Rand, k int, theta []float64) (RJChain, error) {
	s, err := t.Init(k, theta)
	if err != nil {
		return nil, err
	}
	return &rjChain{step: t.Step, s: s}, nil
}

// Start returns an IndependenceRJ chain at (k, θ); rng is unused.
func (r *IndependenceRJ) Start(_ *rand.Rand, k int, theta []float64) (RJChain, error) {
	s, err := r.Init(k, theta)
	if err != nil {
		return nil, err
	}
	return &rjChain{step: r.Step, s: s}, nil
}

// Start returns a CTRJ chain at (k, θ) with auxiliaries drawn from ν.
func (c *CTRJ) Start(rng *rand.Rand, k int, theta []float64) (RJChain, error) {
	if rng == nil {
		return nil, errors.New("kernels: CTRJ.Start needs a random stream for the auxiliaries")
	}
	s, err := c.Init(rng, k, theta)
	if err != nil {
		return nil, err
	}
	return &ctrjChain{c: c, s: s}, nil
}

type rjChain struct {
	step func(*rand.Rand, RJState) (RJState, RJInfo)
	s    RJState
}

func (c *rjChain) Step(rng *rand.Rand) RJInfo {
	var info RJInfo
	c.s, info = c.step(rng, c.s)
	return info
}
func (c *rjChain) Model() int          { return c.s.Model }
func (c *rjChain) LogDensity() float64 { return c.s.LogDensity }
func (c *rjChain) Theta(dst []float64) []float64 {
	return append(dst[:0], c.s.Theta...)
}

type ctrjChain struct {
	c *CTRJ
	s CTRJState
}

func (c *ctrjChain) Step(rng *rand.Rand) RJInfo {
	var info RJInfo
	c.s, info = c.c.Step(rng, c.s)
	return info
}
func (c *ctrjChain) Model() int          { return c.s.Model }
func (c *ctrjChain) LogDensity() float64 { return c.s.LogDensity }
func (c *ctrjChain) Theta(dst []float64) []float64 {
	n := len(c.c.active[c.s.Model])
	return c.c.Theta(c.s, slices.Grow(dst[:0], n)[:n])
}

// RJSampleSettings configures SampleRJ. A nil *RJSampleSettings, and zero
// fields, take the defaults.
type RJSampleSettings struct {
	// Chains is the number of chains (4).
	Chains int
	// ChainIndices, when non-nil, runs only these chains (each in
	// [0, Chains)), seeded as in the full run: a shard of a larger run.
	ChainIndices []int
	// Warmup is the number of steps discarded at the start of each chain
	// (Steps/10); a negative value means none.
	Warmup int
	// Steps is the number of kept steps per chain (10000).
	Steps int
	// Seed seeds every chain: chain c uses rand.NewPCG(Seed, c).
	Seed uint64
	// KeepDraws keeps θ_k after every kept step (RJChainResult.Draws).
	KeepDraws bool
	// OnDraw, when non-nil, is called after every kept step with the
	// chain, the 0-based kept-step index, the model and θ_k (valid only
	// during the call). Chains call it concurrently; an error stops the
	// chain and is returned.
	OnDraw func(chain, step, model int, theta []float64, info RJInfo) error
	// Progress, when non-nil, is called after every step of every chain
	// (Done counts steps, warm-up first); chains call it concurrently.
	Progress func(Progress)
}

// RJChainResult is one chain of SampleRJ.
type RJChainResult struct {
	// Chain is the chain's index (its seed stream).
	Chain int
	// Models[i] is the model after kept step i.
	Models []int
	// Draws holds θ after each kept step, concatenated: draw i is
	// Draws[Offsets[i]:Offsets[i+1]]. Empty unless KeepDraws.
	Draws   []float64 `json:",omitempty"`
	Offsets []int     `json:",omitempty"`
	// Proposed[k][k'] and Accepted[k][k'] count the jump proposals k → k'
	// made in kept steps and those accepted.
	Proposed, Accepted [][]int
	// Elapsed is the chain's wall-clock time.
	Elapsed time.Duration
}

// Draw returns θ after kept step i (KeepDraws only).
func (c *RJChainResult) Draw(i int) []float64 { return c.Draws[c.Offsets[i]:c.Offsets[i+1]] }

// RJSampleResult is the output of SampleRJ.
type RJSampleResult struct {
	// NumModels is K.
	NumModels int
	// Chains are the chains run, in the order of their indices.
	Chains []RJChainResult
}

// Indicators returns, for model k, one series per chain of 1 where the chain
// was in model k after a kept step and 0 elsewhere: the input of
// diag.MCSEMean and diag.Rhat for π(k | y). Chains are cut to the shortest.
func (r *RJSampleResult) Indicators(k int) [][]float64 {
	n := -1
	for _, c := range r.Chains {
		if n < 0 || len(c.Models) < n {
			n = len(c.Models)
		}
	}
	out := make([][]float64, len(r.Chains))
	for c := range r.Chains {
		x := make([]float64, max(n, 0))
		for i := range x {
			if r.Chains[c].Models[i] == k {
				x[i] = 1
			}
		}
		out[c] = x
	}
	return out
}

// SampleRJ runs transdimensional chains in parallel, one goroutine, kernel
// and random stream rand.NewPCG(Seed, c) per chain c, as Sample does for
// fixed-dimension targets. factory(c) returns chain c's own kernel; start
// gives its initial model and θ from its stream. Each kept step is
// recorded; jump counts give acceptance rates per model pair.
//
// Cancelling ctx stops every chain at its next step: the result holds the
// steps finished so far, and the error is ctx's.
func SampleRJ(ctx context.Context, factory func(chain int) (RJKernel, error), start func(chain int, rng *rand.Rand) (k int, theta []float64, err error), settings *RJSampleSettings) (*RJSampleResult, error) {
	if factory == nil || start == nil {
		return nil, errors.New("kernels: SampleRJ needs a kernel factory and a start function")
	}
	var s RJSampleSettings
	if settings != nil {
		s = *settings
	}
	if s.Chains == 0 {
		s.Chains = 4
	}
	if s.Steps == 0 {
		s.Steps = 10000
	}
	if s.Warmup == 0 {
		s.Warmup = s.Steps / 10
	}
	s.Warmup = max(s.Warmup, 0)
	switch {
	case s.Chains < 0:
		return nil, fmt.Errorf("kernels: %d chains", s.Chains)
	case s.Steps < 0:
		return nil, fmt.Errorf("kernels: %d steps", s.Steps)
	case s.Chains > rjMaxChains:
		return nil, fmt.Errorf("kernels: %d chains is more than the %d a run may have", s.Chains, rjMaxChains)
	}
	idx := s.ChainIndices
	if idx == nil {
		idx = make([]int, s.Chains)
		for c := range idx {
			idx[c] = c
		}
	}
	seen := make(map[int]bool, len(idx))
	for _, c := range idx {
		if c < 0 || c >= s.Chains || seen[c] {
			return nil, fmt.Errorf("kernels: chain index %d is out of range [0, %d) or repeated", c, s.Chains)
		}
		seen[c] = true
	}
	kernels := make([]RJKernel, len(idx))
	numModels := -1
	for i, c := range idx {
		k, err := factory(c)
		if err != nil {
			return nil, fmt.Errorf("kernels: chain %d: %w", c, err)
		}
		if k == nil {
			return nil, fmt.Errorf("kernels: chain %d: nil kernel", c)
		}
		if numModels >= 0 && k.NumModels() != numModels {
			return nil, fmt.Errorf("kernels: chain %d has %d models, chain %d has %d", c, k.NumModels(), idx[0], numModels)
		}
		numModels = k.NumModels()
		kernels[i] = k
	}
	res := &RJSampleResult{NumModels: max(numModels, 0), Chains: make([]RJChainResult, len(idx))}
	errs := make([]error, len(idx))
	var wg sync.WaitGroup
	for i, c := range idx {
		wg.Go(func() {
			res.Chains[i], errs[i] = runRJChain(ctx, c, kernels[i], start, &s, res.NumModels)
		})
	}
	wg.Wait()
	var ctxErr error
	for i, err := range errs {
		if err == nil {
			continue
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			ctxErr = err
			continue
		}
		return res, fmt.Errorf("kernels: chain %d: %w", idx[i], err)
	}
	return res, ctxErr
}

// rjMaxChains bounds the chains of one run: each needs a goroutine and a
// kernel, so a mistyped count fails at once instead of exhausting memory.
const rjMaxChains = 1 << 16

func runRJChain(ctx context.Context, c int, k RJKernel, start func(int, *rand.Rand) (int, []float64, error), s *RJSampleSettings, numModels int) (RJChainResult, error) {
	t0 := time.Now()
	out := RJChainResult{Chain: c, Proposed: newCounts(numModels), Accepted: newCounts(numModels)}
	defer func() { out.Elapsed = time.Since(t0) }()
	rng := rand.New(rand.NewPCG(s.Seed, uint64(c)))
	m, theta, err := start(c, rng)
	if err != nil {
		return out, fmt.Errorf("start: %w", err)
	}
	ch, err := k.Start(rng, m, theta)
	if err != nil {
		return out, err
	}
	total := s.Warmup + s.Steps
	out.Models = make([]int, 0, s.Steps)
	if s.KeepDraws {
		out.Offsets = append(make([]int, 0, s.Steps+1), 0)
	}
	var th []float64
	for it := range total {
		if it%64 == 0 {
			if err := ctx.Err(); err != nil {
				return out, err
			}
		}
		info := ch.Step(rng)
		if s.Progress != nil {
			s.Progress(Progress{Chain: c, Done: it + 1, Total: total, Warmup: it < s.Warmup})
		}
		if it < s.Warmup {
			continue
		}
		if info.Jumped {
			out.Proposed[info.Jump.From][info.Jump.To]++
			if info.JumpAccepted {
				out.Accepted[info.Jump.From][info.Jump.To]++
			}
		}
		model := ch.Model()
		out.Models = append(out.Models, model)
		if s.KeepDraws || s.OnDraw != nil {
			th = ch.Theta(th)
		}
		if s.KeepDraws {
			out.Draws = append(out.Draws, th...)
			out.Offsets = append(out.Offsets, len(out.Draws))
		}
		if s.OnDraw != nil {
			if err := s.OnDraw(c, it-s.Warmup, model, th, info); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

func newCounts(k int) [][]int {
	m := make([][]int, k)
	for i := range m {
		m[i] = make([]int, k)
	}
	return m
}
