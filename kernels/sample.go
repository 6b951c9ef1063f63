package kernels

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
)

// Algorithm selects the kernel the multi-chain runner uses.
type Algorithm int

const (
	// AlgNUTS is the No-U-Turn sampler with Stan's warm-up (the default).
	AlgNUTS Algorithm = iota
	// AlgRWM is random-walk Metropolis with Robbins–Monro scale adaptation.
	AlgRWM
)

// String returns the algorithm's name.
func (a Algorithm) String() string {
	switch a {
	case AlgNUTS:
		return "nuts"
	case AlgRWM:
		return "rwm"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// InitFunc writes chain's initial unconstrained position into x using rng
// (the chain's own stream). ppl.Model's Init fits after wrapping.
type InitFunc func(chain int, rng *rand.Rand, x []float64) error

// SampleSettings configures Sample. A nil *SampleSettings, and zero
// fields, take the defaults.
type SampleSettings struct {
	// Algorithm is AlgNUTS (default) or AlgRWM.
	Algorithm Algorithm
	// Chains is the number of chains (4).
	Chains int
	// Warmup is the number of warm-up iterations per chain (1000); a
	// negative value means none.
	Warmup int
	// Draws is the number of kept iterations per chain (1000).
	Draws int
	// Seed seeds every chain: chain c uses rand.NewPCG(Seed, c).
	Seed uint64
	// FirstChain numbers the chains: the run's k-th chain is chain
	// FirstChain+k, seeded, built (factory, init) and reported (Progress,
	// errors) as that chain, so a run split into blocks of chains (shards
	// in separate processes) reproduces the chains of one run exactly.
	// Zero runs chains 0 … Chains−1.
	FirstChain int
	// SaveWarmup keeps the warm-up iterations in the result.
	SaveWarmup bool

	// StepSize is NUTS's initial step size (1) before the search.
	StepSize float64
	// Metric, when non-nil, is NUTS's initial metric (the unit metric);
	// with Warmup < 0 it is used as is.
	Metric *Metric
	// MaxTreeDepth bounds NUTS trees (10).
	MaxTreeDepth int
	// NUTSAdapt configures NUTS warm-up; its Metric field picks the metric
	// (diagonal by default).
	NUTSAdapt NUTSAdaptConfig

	// RWMScale is RWM's initial proposal scale (2.38/√d).
	RWMScale float64
	// RWMCovariance, when non-nil, is RWM's initial proposal covariance
	// (a fixed covariance when Warmup < 0).
	RWMCovariance mat.Symmetric
	// RWMAdapt configures RWM warm-up.
	RWMAdapt RWMAdaptConfig

	// Init, when non-nil, writes chain's initial unconstrained position;
	// nil uses the target's own Init method when it has one (as ppl
	// models do), else Stan's uniform draw in (−2, 2)ⁿ.
	Init InitFunc

	// Progress, when non-nil, is called after every iteration of every
	// chain (Done counts iterations, warm-up first); chains call it
	// concurrently.
	Progress func(Progress)

	// Output, when non-nil, is called once per chain with the chain's
	// number (FirstChain onwards), from the chain's goroutine before its
	// first iteration, for the ChainOutput that
	// receives that chain's draws as they are made (see CmdStanOutput).
	// An error from it or from the output stops the run.
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
	// Dim is the dimension of a draw.
	Dim int
	// Draws holds the kept positions (unconstrained), row-major,
	// NumDraws×Dim; WarmupDraws the warm-up ones when saved.
	Draws, WarmupDraws []float64
	// Info and WarmupInfo describe each kept (and saved warm-up) draw.
	Info, WarmupInfo []DrawInfo
	// StepSize is NUTS's adapted step size; Metric its adapted metric.
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
	var out SampleSettings
	if s != nil {
		out = *s
	}
	if out.Chains == 0 {
		out.Chains = 4
	}
	if out.Warmup == 0 {
		out.Warmup = 1000
	} else if out.Warmup < 0 {
		out.Warmup = 0
	}
	if out.Draws == 0 {
		out.Draws = 1000
	}
	if out.StepSize == 0 {
		out.StepSize = 1
	}
	if out.MaxTreeDepth == 0 {
		out.MaxTreeDepth = DefaultMaxTreeDepth
	}
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
	var init InitFunc
	if settings != nil {
		init = settings.Init
	}
	if factory == nil {
		return nil, errors.New("kernels: nil target factory")
	}
	set := settings.withDefaults()
	switch {
	case set.Chains < 0:
		return nil, fmt.Errorf("kernels: %d chains", set.Chains)
	case set.FirstChain < 0:
		return nil, fmt.Errorf("kernels: first chain %d, want non-negative", set.FirstChain)
	case set.Draws < 0:
		return nil, fmt.Errorf("kernels: %d draws", set.Draws)
	case set.Algorithm != AlgNUTS && set.Algorithm != AlgRWM:
		return nil, fmt.Errorf("kernels: unknown algorithm %v", set.Algorithm)
	case !(set.StepSize > 0) || math.IsInf(set.StepSize, 1):
		return nil, fmt.Errorf("kernels: initial step size %v, want positive and finite", set.StepSize)
	case set.MaxTreeDepth < 0:
		return nil, fmt.Errorf("kernels: maximum tree depth %d, want positive (0 means %d)", set.MaxTreeDepth, DefaultMaxTreeDepth)
	case set.Warmup > math.MaxInt-set.Draws:
		return nil, fmt.Errorf("kernels: %d warm-up and %d kept iterations overflow an int", set.Warmup, set.Draws)
	}
	// Refuse up front what cannot fit, counting one dimension per draw;
	// each chain checks again with its target's dimension.
	if err := set.CheckMemory(0); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := &SampleResult{Settings: set, Chains: make([]Chain, set.Chains)}
	errs := make([]error, set.Chains)
	dims := make([]int, set.Chains)
	// ready waits for every chain's target, so that targets of different
	// dimensions are refused before any chain runs.
	var ready, wg sync.WaitGroup
	ready.Add(set.Chains)
	for k := 0; k < set.Chains; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			errs[k] = runChain(ctx, set.FirstChain+k, k, factory, init, &set, &res.Chains[k], dims, &ready)
			if errs[k] != nil {
				cancel()
			}
		}(k)
	}
	wg.Wait()
	// Report the root cause: a chain's own failure rather than the
	// cancellation it caused in the others.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
	}
	if set.Chains > 0 {
		res.Dim = dims[0]
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

// chainOverheadBytes is a lower bound on the memory of a chain besides its
// draws: a goroutine, its kernel's scratch and its target.
const chainOverheadBytes = 16 << 10

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
	perDraw := 8*uint64(dim) + drawInfoBytes
	need, ok := mulAdd(kept, perDraw, chainOverheadBytes)
	if ok {
		need, ok = mulAdd(need, uint64(max(set.Chains, 0)), 0)
	}
	limit := memoryLimit()
	if ok && (limit == 0 || need <= limit) {
		return nil
	}
	what := fmt.Sprintf("%d chains × %d stored draws of dimension %s", set.Chains, kept, dimText)
	if !ok {
		return fmt.Errorf("%w: %s need more than 2⁶⁴ bytes", ErrTooLarge, what)
	}
	return fmt.Errorf("%w: %s need %s, more than the %s available", ErrTooLarge, what, formatBytes(need), formatBytes(limit))
}

// ErrTooLarge is returned (wrapped) for runs whose draws cannot fit in
// memory; the message says how much they would need.
var ErrTooLarge = errors.New("kernels: run too large")

// mulAdd returns a·b + c and whether it fits in a uint64 (and an int).
func mulAdd(a, b, c uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	sum, carry := bits.Add64(lo, c, 0)
	return sum, hi == 0 && carry == 0 && sum <= math.MaxInt
}

// formatBytes prints n in the largest binary unit that keeps it ≥ 1.
func formatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.3g %s", v, units[u])
}

// memoryLimit is the smaller of the Go memory limit (GOMEMLIMIT) and the
// machine's memory, or 0 when neither is known.
func memoryLimit() uint64 {
	limit := uint64(0)
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		limit = uint64(l)
	}
	if m := physicalMemory(); m > 0 && (limit == 0 || m < limit) {
		limit = m
	}
	return limit
}

// runChain runs chain c of the whole run, the k-th of this one; dims[k]
// receives its dimension and ready is the barrier of all the run's chains.
func runChain(ctx context.Context, c, k int, factory func(int) (Target, error), init InitFunc, set *SampleSettings, out *Chain, dims []int, ready *sync.WaitGroup) (err error) {
	t, err := factory(c)
	switch {
	case err != nil:
		err = fmt.Errorf("kernels: chain %d: target: %w", c, err)
	case t == nil:
		err = fmt.Errorf("kernels: chain %d: factory returned a nil target", c)
	default:
		if dims[k] = t.Dim(); dims[k] <= 0 {
			err = fmt.Errorf("kernels: chain %d: %w: target dimension %d", c, ErrDimension, dims[k])
		}
	}
	ready.Done()
	if err != nil {
		return err
	}
	ready.Wait()
	n := dims[k]
	for k2, n2 := range dims {
		if n2 > 0 && n2 != n {
			return fmt.Errorf("kernels: chain %d: %w: target dimension %d, chain %d's is %d; all chains must sample the same space", c, ErrDimension, n, set.FirstChain+k2, n2)
		}
	}
	if err := set.CheckMemory(n); err != nil {
		return err
	}
	var output ChainOutput
	if set.Output != nil {
		if output, err = set.Output(c); err != nil {
			return fmt.Errorf("kernels: chain %d: output: %w", c, err)
		}
		if output == nil {
			return fmt.Errorf("kernels: chain %d: Output returned nil", c)
		}
		defer func() {
			if cerr := output.Close(out, err); cerr != nil && err == nil {
				err = fmt.Errorf("kernels: chain %d: output: %w", c, cerr)
			}
		}()
	}
	rng := rand.New(rand.NewPCG(set.Seed, uint64(c)))
	x0, err := initialPoint(c, t, rng, init)
	if err != nil {
		return fmt.Errorf("kernels: chain %d: %w", c, err)
	}
	total := set.Warmup + set.Draws
	out.Dim = n
	out.Draws = make([]float64, 0, set.Draws*n)
	out.Info = make([]DrawInfo, 0, set.Draws)
	if set.SaveWarmup {
		out.WarmupDraws = make([]float64, 0, set.Warmup*n)
		out.WarmupInfo = make([]DrawInfo, 0, set.Warmup)
	}
	record := func(it int, x []float64, d DrawInfo) error {
		warm := it < set.Warmup
		if !warm {
			out.Draws = append(out.Draws, x...)
			out.Info = append(out.Info, d)
		} else if set.SaveWarmup {
			out.WarmupDraws = append(out.WarmupDraws, x...)
			out.WarmupInfo = append(out.WarmupInfo, d)
		}
		if output != nil && (!warm || set.SaveWarmup) {
			if err := output.Draw(it, warm, x, d); err != nil {
				return fmt.Errorf("kernels: chain %d: output: %w", c, err)
			}
		}
		if set.Progress != nil {
			set.Progress(Progress{Chain: c, Done: it + 1, Total: total, Warmup: warm})
		}
		return nil
	}
	// Checking the context costs a lock; every 16 iterations is prompt
	// enough for a chain.
	cancelled := func(it int) error {
		if it%16 == 0 {
			return ctx.Err()
		}
		return nil
	}
	adapted := func() error {
		if output == nil {
			return nil
		}
		if err := output.Adapted(out); err != nil {
			return fmt.Errorf("kernels: chain %d: output: %w", c, err)
		}
		return nil
	}

	switch set.Algorithm {
	case AlgNUTS:
		k, err := NewNUTS(t, set.StepSize, set.Metric)
		if err != nil {
			return fmt.Errorf("kernels: chain %d: %w", c, err)
		}
		k.MaxTreeDepth = set.MaxTreeDepth
		s, err := k.Init(x0)
		if err != nil {
			return fmt.Errorf("kernels: chain %d: %w", c, err)
		}
		ad, err := NewNUTSAdaptation(k, set.Warmup, set.NUTSAdapt)
		if err != nil {
			return fmt.Errorf("kernels: chain %d: %w", c, err)
		}
		endWarmup := func() error {
			out.WarmupGradEvals = ad.GradEvals
			out.StepSize, out.Metric = k.StepSize, k.Metric
			return adapted()
		}
		err = runPhases(total, set.Warmup, cancelled, record, out, endWarmup,
			func(it int) ([]float64, DrawInfo, error) {
				var info NUTSInfo
				var err error
				if s, info, err = ad.Step(rng, s); err != nil {
					return nil, DrawInfo{}, fmt.Errorf("kernels: chain %d: %w", c, err)
				}
				if it == set.Warmup-1 {
					ad.Finish()
				}
				return s.Position, nutsDrawInfo(s, info), nil
			},
			func() ([]float64, DrawInfo) {
				var info NUTSInfo
				s, info = k.Step(rng, s)
				out.SampleGradEvals += info.NumLeapfrog
				return s.Position, nutsDrawInfo(s, info)
			})
		if err != nil {
			return err
		}
	case AlgRWM:
		scale := set.RWMScale
		if scale == 0 {
			scale = 2.38 / math.Sqrt(float64(n))
		}
		k, err := NewRWM(t, scale, set.RWMCovariance)
		if err != nil {
			return fmt.Errorf("kernels: chain %d: %w", c, err)
		}
		s, err := k.Init(x0)
		if err != nil {
			return fmt.Errorf("kernels: chain %d: %w", c, err)
		}
		ad, err := NewRWMAdaptation(k, set.Warmup, set.RWMAdapt)
		if err != nil {
			return fmt.Errorf("kernels: chain %d: %w", c, err)
		}
		endWarmup := func() error {
			out.RWMScale, out.RWMCovariance = k.Scale, k.Covariance()
			return adapted()
		}
		err = runPhases(total, set.Warmup, cancelled, record, out, endWarmup,
			func(int) ([]float64, DrawInfo, error) {
				var info RWMInfo
				var err error
				if s, info, err = ad.Step(rng, s); err != nil {
					return nil, DrawInfo{}, fmt.Errorf("kernels: chain %d: %w", c, err)
				}
				out.WarmupGradEvals++
				return s.Position, rwmDrawInfo(s, info), nil
			},
			func() ([]float64, DrawInfo) {
				var info RWMInfo
				s, info = k.Step(rng, s)
				out.SampleGradEvals++
				return s.Position, rwmDrawInfo(s, info)
			})
		if err != nil {
			return err
		}
	}
	return nil
}

// runPhases runs a chain's warm-up iterations, then its sampling ones, and
// times each phase: warm and sample advance the chain by one iteration and
// return the draw to record; endWarmup runs once after the warm-up (also
// when there is none), before the first kept iteration. The phase times
// are set also when the chain stops early.
func runPhases(total, warmup int, cancelled func(int) error, record func(int, []float64, DrawInfo) error, out *Chain,
	endWarmup func() error, warm func(it int) ([]float64, DrawInfo, error), sample func() ([]float64, DrawInfo)) error {
	start := time.Now()
	inWarmup := true
	finishWarmup := func() error {
		out.WarmupTime = time.Since(start)
		start = time.Now()
		inWarmup = false
		return endWarmup()
	}
	defer func() {
		if inWarmup {
			out.WarmupTime = time.Since(start)
		} else {
			out.SampleTime = time.Since(start)
		}
	}()
	for it := 0; it < total; it++ {
		if err := cancelled(it); err != nil {
			return err
		}
		var x []float64
		var d DrawInfo
		if it < warmup {
			var err error
			if x, d, err = warm(it); err != nil {
				return err
			}
		} else {
			if it == warmup {
				if err := finishWarmup(); err != nil {
					return err
				}
			}
			x, d = sample()
		}
		if err := record(it, x, d); err != nil {
			return err
		}
	}
	if inWarmup {
		return finishWarmup()
	}
	return nil
}

// nutsDrawInfo is the per-draw record of a NUTS iteration.
func nutsDrawInfo(s NUTSState, info NUTSInfo) DrawInfo {
	return DrawInfo{
		LogDensity: s.LogDensity, AcceptStat: info.AcceptProb, StepSize: info.StepSize,
		TreeDepth: info.TreeDepth, NumLeapfrog: info.NumLeapfrog, Divergent: info.Divergent, Energy: info.Energy,
	}
}

// rwmDrawInfo is the per-draw record of a random-walk Metropolis iteration.
func rwmDrawInfo(s RWMState, info RWMInfo) DrawInfo {
	return DrawInfo{LogDensity: s.LogDensity, AcceptStat: info.AcceptProb, StepSize: info.Scale}
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
