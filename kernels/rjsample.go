package kernels

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/trjgo/trj/internal/runs"
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
	// Chains is the number of chains of the run (4).
	Chains int
	// Shard, when non-nil, runs only these chains of the run (each in
	// [0, Chains), none repeated), seeded as in the whole run: a shard of
	// a larger run. RJSampleResult.Chains follow Shard's order.
	Shard []int
	// Warmup is the number of steps discarded at the start of each chain
	// (Steps/10); a negative value means none.
	Warmup int
	// Steps is the number of kept steps per chain (10000).
	Steps int
	// Seed seeds every chain: chain c uses rand.NewPCG(Seed, c).
	Seed uint64
	// KeepDraws keeps θ_k after every kept step (RJChainResult.Draws).
	KeepDraws bool
	// Output, when non-nil, is called once per chain with the chain's
	// number, from the chain's goroutine before its first step, for the
	// RJChainOutput that receives that chain's kept steps as they are
	// made (RJDrawFunc makes one of a function). An error from it or from
	// the output stops the run.
	Output func(chain int) (RJChainOutput, error)
	// Progress, when non-nil, is called after every step of every chain
	// (Done counts steps, warm-up first); chains call it concurrently.
	Progress func(Progress)
}

// RJChainOutput receives one chain's output while SampleRJ runs it, as
// ChainOutput does for Sample: SampleRJ calls its methods from that chain's
// goroutine only, Draw for every kept step and Close once at the end, also
// when the chain stopped early.
type RJChainOutput interface {
	// Draw receives kept step (0-based), its model and θ_k, which is
	// valid only during the call.
	Draw(step, model int, theta []float64, info RJInfo) error
	// Close receives the chain, and the error that stopped it early (such
	// as ctx's on cancellation) or nil.
	Close(ch *RJChainResult, stopped error) error
}

// RJDrawFunc is an RJChainOutput that calls itself for every kept step and
// does nothing at Close.
type RJDrawFunc func(step, model int, theta []float64, info RJInfo) error

// Draw calls f.
func (f RJDrawFunc) Draw(step, model int, theta []float64, info RJInfo) error {
	return f(step, model, theta, info)
}

// Close does nothing.
func (f RJDrawFunc) Close(*RJChainResult, error) error { return nil }

// RJChainResult is one chain of SampleRJ.
type RJChainResult struct {
	// Chain is the chain's index (its seed stream).
	Chain int `json:"chain"`
	// Models[i] is the model after kept step i.
	Models []int `json:"models"`
	// Draws holds θ after each kept step, concatenated: draw i is
	// Draws[Offsets[i]:Offsets[i+1]]. Empty unless KeepDraws.
	Draws   []float64 `json:"draws,omitempty"`
	Offsets []int     `json:"offsets,omitempty"`
	// Proposed[k][k'] and Accepted[k][k'] count the jump proposals k → k'
	// made in kept steps and those accepted.
	Proposed [][]int `json:"proposed"`
	Accepted [][]int `json:"accepted"`
	// Elapsed is zero: SampleRJ does not time its chains, so that results
	// written as JSON are the same for the same seed (wall times belong in
	// the caller's own timings).
	Elapsed time.Duration `json:"elapsed"`
}

// Draw returns θ after kept step i (KeepDraws only).
func (c *RJChainResult) Draw(i int) []float64 { return c.Draws[c.Offsets[i]:c.Offsets[i+1]] }

// RJSampleResult is the output of SampleRJ.
type RJSampleResult struct {
	// NumModels is K.
	NumModels int `json:"num_models"`
	// Chains are the chains run, in the order of their indices.
	Chains []RJChainResult `json:"chains"`
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
// recorded; jump counts give acceptance rates per model pair. Runs whose
// kept steps cannot fit in memory are refused before any chain starts (see
// CheckMemory).
//
// Cancelling ctx stops every chain at its next step: the result holds the
// steps finished so far, and the error is ctx's.
func SampleRJ(ctx context.Context, factory func(chain int) (RJKernel, error), start func(chain int, rng *rand.Rand) (k int, theta []float64, err error), settings *RJSampleSettings) (*RJSampleResult, error) {
	if factory == nil || start == nil {
		return nil, errors.New("kernels: SampleRJ needs a kernel factory and a start function")
	}
	s := settings.withDefaults()
	if s.Chains > rjMaxChains {
		return nil, fmt.Errorf("kernels: %d chains is more than the %d a run may have", s.Chains, rjMaxChains)
	}
	_, idx, err := planRun(s.Warmup, s.Steps, "steps", s.CheckMemory, s.Shard, s.Chains)
	if err != nil {
		return nil, err
	}
	kernels, numModels, err := rjKernels(factory, idx)
	if err != nil {
		return nil, err
	}
	res := &RJSampleResult{NumModels: numModels, Chains: make([]RJChainResult, len(idx))}
	errs := make([]error, len(idx))
	var wg sync.WaitGroup
	for i, c := range idx {
		wg.Go(func() {
			errs[i] = runRJChain(ctx, c, kernels[i], start, &s, &res.Chains[i])
		})
	}
	wg.Wait()
	var ctxErr error
	for i, err := range errs {
		if err == nil {
			continue
		}
		if isContextErr(err) {
			ctxErr = err
			continue
		}
		return res, fmt.Errorf("kernels: chain %d: %w", idx[i], err)
	}
	return res, ctxErr
}

func (s *RJSampleSettings) withDefaults() RJSampleSettings {
	out := settingsOf(s)
	setDefault(&out.Chains, 4)
	setDefault(&out.Steps, 10000)
	setDefault(&out.Warmup, out.Steps/10)
	out.Warmup = max(out.Warmup, 0)
	return out
}

// CheckMemory refuses runs whose kept steps, with θ of dimension at most
// dim when KeepDraws (0 if not known: at least 1 is counted), cannot fit in
// memory: more bytes than an int holds, or than the machine's memory (or
// the Go memory limit) when it is known. Its error, wrapping ErrTooLarge,
// says how much the run would need. SampleRJ calls it.
func (s *RJSampleSettings) CheckMemory(dim int) error {
	set := s.withDefaults()
	perStep, what := uint64(8), "kept steps" // the model
	if set.KeepDraws {
		dimText := strconv.Itoa(dim)
		if dim <= 0 {
			dim, dimText = 1, "at least 1"
		}
		perStep += 8 + 8*uint64(dim) // an offset and θ
		what = "kept steps with draws of dimension " + dimText
	}
	chains := set.Chains
	if set.Shard != nil {
		chains = len(set.Shard)
	}
	return checkMemory(chains, uint64(max(set.Steps, 0)), perStep, what)
}

// rjKernels returns the kernels of chains idx and their number of models.
func rjKernels(factory func(int) (RJKernel, error), idx []int) ([]RJKernel, int, error) {
	kernels := make([]RJKernel, len(idx))
	numModels := -1
	for i, c := range idx {
		k, err := factory(c)
		if err != nil {
			return nil, 0, fmt.Errorf("kernels: chain %d: %w", c, err)
		}
		if k == nil {
			return nil, 0, fmt.Errorf("kernels: chain %d: nil kernel", c)
		}
		if numModels >= 0 && k.NumModels() != numModels {
			return nil, 0, fmt.Errorf("kernels: chain %d has %d models, chain %d has %d", c, k.NumModels(), idx[0], numModels)
		}
		numModels = k.NumModels()
		kernels[i] = k
	}
	return kernels, max(numModels, 0), nil
}

// rjMaxChains bounds the chains of one run: each needs a goroutine and a
// kernel, so a mistyped count fails at once instead of exhausting memory.
const rjMaxChains = runs.MaxChains

// runRJChain runs chain c into out.
func runRJChain(ctx context.Context, c int, k RJKernel, start func(int, *rand.Rand) (int, []float64, error), s *RJSampleSettings, out *RJChainResult) (err error) {
	numModels := k.NumModels()
	*out = RJChainResult{Chain: c, Proposed: newCounts(numModels), Accepted: newCounts(numModels)}
	var output RJChainOutput
	if s.Output != nil {
		if output, err = s.Output(c); err != nil {
			return fmt.Errorf("output: %w", err)
		}
		if output == nil {
			return errors.New("the Output function returned nil")
		}
		defer func() {
			if cerr := output.Close(out, err); cerr != nil && err == nil {
				err = fmt.Errorf("output: %w", cerr)
			}
		}()
	}
	rng := rand.New(rand.NewPCG(s.Seed, uint64(c)))
	m, theta, err := start(c, rng)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	ch, err := k.Start(rng, m, theta)
	if err != nil {
		return err
	}
	total := s.Warmup + s.Steps
	out.Models = make([]int, 0, s.Steps)
	if s.KeepDraws {
		out.Offsets = append(make([]int, 0, s.Steps+1), 0)
	}
	var th []float64
	for it := range total {
		if err := cancelled(ctx, it, 64); err != nil {
			return err
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
		if s.KeepDraws || output != nil {
			th = ch.Theta(th)
		}
		if s.KeepDraws {
			out.Draws = append(out.Draws, th...)
			out.Offsets = append(out.Offsets, len(out.Draws))
		}
		if output != nil {
			if err := output.Draw(it-s.Warmup, model, th, info); err != nil {
				return fmt.Errorf("output: %w", err)
			}
		}
	}
	return nil
}

func newCounts(k int) [][]int {
	m := make([][]int, k)
	for i := range m {
		m[i] = make([]int, k)
	}
	return m
}
