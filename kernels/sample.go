package kernels

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
)

// InitFunc writes chain's initial unconstrained position into x using rng
// (the chain's own stream). ppl.Model's Init fits after wrapping.
type InitFunc func(chain int, rng *rand.Rand, x []float64) error

// SampleSettings configures Sample. A nil *SampleSettings, and zero
// fields, take the defaults.
type SampleSettings struct {
	// Method is the kernel of every chain with its warm-up: NUTSMethod
	// (the default, when nil) or RWMMethod.
	Method Method
	// Chains is the number of chains of the run (4).
	Chains int
	// Shard, when non-nil, runs only these chains of the run (each in
	// [0, Chains), none repeated), seeded, built (factory, Init) and
	// reported (Progress, Output, errors) as in the whole run, so a run
	// split into shards (in separate processes) reproduces its chains
	// exactly. SampleResult.Chains follow Shard's order.
	Shard []int
	// Warmup is the number of warm-up iterations per chain (1000); a
	// negative value means none.
	Warmup int
	// Draws is the number of kept iterations per chain (1000).
	Draws int
	// Seed seeds every chain: chain c uses rand.NewPCG(Seed, c).
	Seed uint64
	// SaveWarmup keeps the warm-up iterations in the result.
	SaveWarmup bool

	// Init, when non-nil, writes chain's initial unconstrained position;
	// nil uses the target's own Init method when it has one (as ppl
	// models do), else Stan's uniform draw in (−2, 2)ⁿ.
	Init InitFunc

	// Progress, when non-nil, is called after every iteration of every
	// chain (Done counts iterations, warm-up first); chains call it
	// concurrently.
	Progress func(Progress)

	// Output, when non-nil, is called once per chain with the chain's
	// number, from the chain's goroutine before its first iteration, for
	// the ChainOutput that receives that chain's draws as they are made
	// (see CmdStanOutput). An error from it or from the output stops the
	// run.
	Output func(chain int) (ChainOutput, error)
}

// ChainOutput receives one chain's output while Sample runs it. Sample
// calls its methods from that chain's goroutine only, in order: Draw for
// every recorded iteration (the saved warm-up ones, then the kept ones),
// Adapted once between the last warm-up and the first kept iteration, and
// Close once at the end, also when the chain stopped early.
type ChainOutput interface {
	// Draw receives recorded iteration it (0-based, warm-up first) at
	// the unconstrained position x, which is valid only during the call.
	Draw(it int, warmup bool, x []float64, info DrawInfo) error
	// Adapted receives the chain with its adapted StepSize and Metric
	// (NUTS) or RWMScale and RWMCovariance (RWM) set.
	Adapted(ch *Chain) error
	// Close receives the chain with its timings and counts set, and the
	// error that stopped it early (such as ctx's on cancellation) or nil.
	Close(ch *Chain, stopped error) error
}

// DrawInfo records one iteration of a chain, with the meaning of Stan's
// sampler columns (lp__, accept_stat__, stepsize__, treedepth__,
// n_leapfrog__, divergent__, energy__). RWM sets TreeDepth, NumLeapfrog
// and Energy to zero and StepSize to its scale.
type DrawInfo struct {
	LogDensity  float64
	AcceptStat  float64
	StepSize    float64
	TreeDepth   int
	NumLeapfrog int
	Divergent   bool
	Energy      float64
}

// Chain is the output of one chain of Sample.
type Chain struct {
	// Chain is the chain's number in the run (its seed stream).
	Chain int
	// Dim is the dimension of a draw.
	Dim int
	// Draws holds the kept positions (unconstrained), row-major,
	// NumDraws×Dim; WarmupDraws the warm-up ones when saved.
	Draws, WarmupDraws []float64
	// Info and WarmupInfo describe each kept (and saved warm-up) draw.
	Info, WarmupInfo []DrawInfo
	// StepSize is NUTS's adapted step size; Metric its adapted metric
	// (see MethodChain.Adapted).
	StepSize float64
	Metric   *Metric
	// RWMScale and RWMCovariance are RWM's adapted proposal.
	RWMScale      float64
	RWMCovariance *mat.SymDense
	// WarmupTime and SampleTime are wall-clock durations of the phases.
	WarmupTime, SampleTime time.Duration
	// WarmupGradEvals and SampleGradEvals count log-density evaluations
	// (with gradient for NUTS) in each phase, excluding initialization.
	WarmupGradEvals, SampleGradEvals int
}

// Draw returns kept draw i of c, a slice of c.Draws.
func (c *Chain) Draw(i int) []float64 { return c.Draws[i*c.Dim : (i+1)*c.Dim] }

// SampleResult is the output of Sample.
type SampleResult struct {
	Dim      int
	Settings SampleSettings // with defaults filled in
	Chains   []Chain
}

func (s *SampleSettings) withDefaults() SampleSettings {
	out := settingsOf(s)
	if out.Method == nil {
		out.Method = NUTSMethod{}
	}
	if m, ok := out.Method.(NUTSMethod); ok && m.validate() == nil {
		out.Method = m.withDefaults()
	}
	setDefault(&out.Chains, 4)
	if out.Warmup == 0 {
		out.Warmup = 1000
	} else if out.Warmup < 0 {
		out.Warmup = 0
	}
	setDefault(&out.Draws, 1000)
	return out
}

// maxInitTries is how many random initial points a chain tries, as Stan.
const maxInitTries = 100

// Sample runs independent chains in parallel goroutines, each with its own
// target from factory and its own random stream rand.NewPCG(Seed, chain),
// so the result depends only on the seed, never on scheduling or
// GOMAXPROCS. Each chain starts at SampleSettings.Init's point; without
// one, at the target's own Init when it has one (a ppl model's WithInit
// point or Stan's draw), else uniformly in (−2, 2)ⁿ as Stan, retrying up to
// 100 times for a finite log-density.
// Cancelling ctx stops every chain after its current iteration and
// returns the draws made so far (chains may differ in length) with ctx's
// error; other errors return a nil result.
func Sample(ctx context.Context, factory func(chain int) (Target, error), settings *SampleSettings) (*SampleResult, error) {
	if factory == nil {
		return nil, errors.New("kernels: nil target factory")
	}
	set := settings.withDefaults()
	if v, ok := set.Method.(validator); ok {
		if err := v.validate(); err != nil {
			return nil, err
		}
	}
	// Refuse up front what cannot fit, counting one dimension per draw;
	// each chain checks again with its target's dimension.
	total, chains, err := planRun(set.Warmup, set.Draws, "draws", set.CheckMemory, set.Shard, set.Chains)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &sampleRun{set: &set, factory: factory, chains: chains, total: total, dims: make([]int, len(chains))}
	res := &SampleResult{Settings: set, Chains: make([]Chain, len(chains))}
	errs := make([]error, len(chains))
	// ready waits for every chain's target, so that targets of different
	// dimensions are refused before any chain runs.
	r.ready.Add(len(chains))
	var wg sync.WaitGroup
	for k := range chains {
		wg.Go(func() {
			if errs[k] = r.runChain(ctx, k, &res.Chains[k]); errs[k] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	// Report the root cause: a chain's own failure rather than the
	// cancellation it caused in the others.
	for _, err := range errs {
		if err != nil && !isContextErr(err) {
			return nil, err
		}
	}
	if len(chains) > 0 {
		res.Dim = r.dims[0]
	}
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// drawInfoBytes is the memory of one DrawInfo.
const drawInfoBytes = 56

// CheckMemory refuses runs whose stored draws of dimension dim (0 if not
// yet known: at least 1 is counted) cannot fit in memory: more bytes than
// an int holds, or than the machine's memory (or the Go memory limit)
// when it is known. Its error, wrapping ErrTooLarge, says how much the run
// would need. Sample calls it; callers that allocate per chain call it
// first.
func (s *SampleSettings) CheckMemory(dim int) error {
	set := s.withDefaults()
	dimText := strconv.Itoa(dim)
	if dim <= 0 {
		dim, dimText = 1, "at least 1"
	}
	kept := uint64(max(set.Draws, 0))
	if set.SaveWarmup {
		kept += uint64(max(set.Warmup, 0))
	}
	chains := set.Chains
	if set.Shard != nil {
		chains = len(set.Shard)
	}
	return checkMemory(chains, kept, 8*uint64(dim)+drawInfoBytes, "stored draws of dimension "+dimText)
}

// sampleRun is what the chains of one Sample run share.
type sampleRun struct {
	set     *SampleSettings
	factory func(int) (Target, error)
	chains  []int // the chains' numbers
	total   int   // iterations per chain
	// dims[k] is the k-th chain's dimension; ready is the barrier all the
	// run's chains pass once they know theirs.
	dims  []int
	ready sync.WaitGroup
}

// runChain runs the run's k-th chain into out.
func (r *sampleRun) runChain(ctx context.Context, k int, out *Chain) (err error) {
	c := r.chains[k]
	out.Chain = c
	t, err := r.target(k)
	if err != nil {
		return err
	}
	rec := &recorder{set: r.set, c: c, total: r.total, out: out}
	if r.set.Output != nil {
		if rec.output, err = r.set.Output(c); err != nil {
			return fmt.Errorf("kernels: chain %d: output: %w", c, err)
		}
		if rec.output == nil {
			return fmt.Errorf("kernels: chain %d: Output returned nil", c)
		}
		defer func() {
			if cerr := rec.output.Close(out, err); cerr != nil && err == nil {
				err = fmt.Errorf("kernels: chain %d: output: %w", c, cerr)
			}
		}()
	}
	rng := rand.New(rand.NewPCG(r.set.Seed, uint64(c)))
	x0, err := initialPoint(c, t, rng, r.set.Init)
	if err != nil {
		return fmt.Errorf("kernels: chain %d: %w", c, err)
	}
	mc, err := r.set.Method.NewChain(t, x0, r.set.Warmup)
	if err != nil {
		return fmt.Errorf("kernels: chain %d: %w", c, err)
	}
	if mc == nil {
		return fmt.Errorf("kernels: chain %d: %T.NewChain returned a nil chain and no error: the method must return a chain or an error", c, r.set.Method)
	}
	rec.alloc(t.Dim())
	return rec.run(ctx, mc, rng)
}

// target returns the run's k-th chain's target once every chain has one of
// the same dimension and the run's draws fit in memory.
func (r *sampleRun) target(k int) (Target, error) {
	c := r.chains[k]
	t, err := r.factory(c)
	switch {
	case err != nil:
		err = fmt.Errorf("kernels: chain %d: target: %w", c, err)
	case t == nil:
		err = fmt.Errorf("kernels: chain %d: factory returned a nil target", c)
	default:
		if r.dims[k] = t.Dim(); r.dims[k] <= 0 {
			err = fmt.Errorf("kernels: chain %d: %w: target dimension %d", c, ErrDimension, r.dims[k])
		}
	}
	r.ready.Done()
	if err != nil {
		return nil, err
	}
	r.ready.Wait()
	n := r.dims[k]
	for k2, n2 := range r.dims {
		if n2 > 0 && n2 != n {
			return nil, fmt.Errorf("kernels: chain %d: %w: target dimension %d, chain %d's is %d; all chains must sample the same space", c, ErrDimension, n, r.chains[k2], n2)
		}
	}
	if err := r.set.CheckMemory(n); err != nil {
		return nil, err
	}
	return t, nil
}

// recorder keeps one chain's iterations: in its Chain, its ChainOutput
// and the Progress reports.
type recorder struct {
	set    *SampleSettings
	c      int // the chain's number
	total  int
	out    *Chain
	output ChainOutput // nil for none
}

func (r *recorder) alloc(n int) {
	out, set := r.out, r.set
	out.Dim = n
	out.Draws = make([]float64, 0, set.Draws*n)
	out.Info = make([]DrawInfo, 0, set.Draws)
	if set.SaveWarmup {
		out.WarmupDraws = make([]float64, 0, set.Warmup*n)
		out.WarmupInfo = make([]DrawInfo, 0, set.Warmup)
	}
}

// record keeps iteration it at x.
func (r *recorder) record(it int, x []float64, d DrawInfo) error {
	out, set := r.out, r.set
	warm := it < set.Warmup
	if !warm {
		out.Draws = append(out.Draws, x...)
		out.Info = append(out.Info, d)
	} else if set.SaveWarmup {
		out.WarmupDraws = append(out.WarmupDraws, x...)
		out.WarmupInfo = append(out.WarmupInfo, d)
	}
	if r.output != nil && (!warm || set.SaveWarmup) {
		if err := r.output.Draw(it, warm, x, d); err != nil {
			return fmt.Errorf("kernels: chain %d: output: %w", r.c, err)
		}
	}
	if set.Progress != nil {
		set.Progress(Progress{Chain: r.c, Done: it + 1, Total: r.total, Warmup: warm})
	}
	return nil
}

// run runs chain mc's warm-up iterations, then its kept ones, recording
// each, and times each phase. What the warm-up adapted goes to the Chain
// and the output after the warm-up (also when there is none), before the
// first kept iteration. The phase times and evaluation counts are set also
// when the chain stops early.
func (r *recorder) run(ctx context.Context, mc MethodChain, rng *rand.Rand) error {
	out, warmup := r.out, r.set.Warmup
	start := time.Now()
	inWarmup := true
	finishWarmup := func() error {
		out.WarmupTime = time.Since(start)
		out.WarmupGradEvals = mc.GradEvals()
		start = time.Now()
		inWarmup = false
		mc.Adapted(out)
		if r.output != nil {
			if err := r.output.Adapted(out); err != nil {
				return fmt.Errorf("kernels: chain %d: output: %w", r.c, err)
			}
		}
		return nil
	}
	defer func() {
		if inWarmup {
			out.WarmupTime = time.Since(start)
			out.WarmupGradEvals = mc.GradEvals()
		} else {
			out.SampleTime = time.Since(start)
			out.SampleGradEvals = mc.GradEvals() - out.WarmupGradEvals
		}
	}()
	for it := 0; it < r.total; it++ {
		if err := cancelled(ctx, it, 16); err != nil {
			return err
		}
		if it == warmup {
			if err := finishWarmup(); err != nil {
				return err
			}
		}
		x, d, err := mc.Step(rng, it)
		if err != nil {
			return fmt.Errorf("kernels: chain %d: %w", r.c, err)
		}
		if len(x) != out.Dim {
			// A user method's bug would otherwise shift every later draw.
			return fmt.Errorf("kernels: chain %d: %T.Step returned a position of length %d, want %d (the target's dimension)", r.c, mc, len(x), out.Dim)
		}
		if err := r.record(it, x, d); err != nil {
			return err
		}
	}
	if inWarmup {
		return finishWarmup()
	}
	return nil
}

// initer is a target with initial points of its own (ppl.Model.Init).
type initer interface {
	Init(rng *rand.Rand, x []float64) error
}

// initialPoint draws a start with a finite log-density and gradient.
func initialPoint(c int, t Target, rng *rand.Rand, init InitFunc) ([]float64, error) {
	n := t.Dim()
	x := make([]float64, n)
	g := make([]float64, n)
	for try := 0; try < maxInitTries; try++ {
		if init != nil {
			if err := init(c, rng, x); err != nil {
				return nil, fmt.Errorf("initialization: %w", err)
			}
		} else if in, ok := t.(initer); ok {
			if err := in.Init(rng, x); err != nil {
				return nil, fmt.Errorf("initialization: %w", err)
			}
		} else {
			for i := range x {
				x[i] = rng.Float64()*4 - 2
			}
		}
		if !math.IsInf(evalGrad(t, x, g), -1) {
			return x, nil
		}
	}
	// Say why the last try failed: the target's error, a value or a
	// gradient entry.
	return nil, fmt.Errorf("%d initial points tried; the last: %w", maxInitTries, initialPointError(t, x, g, true))
}
