package kernels

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// TemperedModel is the target of the SMC sampler: a prior and a likelihood
// kept apart so that SMC can anneal p_β(x) ∝ prior(x)·lik(x)^β from β = 0
// to 1, and a way to draw from the prior. It keeps scratch space, so each
// worker goroutine needs its own.
type TemperedModel interface {
	// Dim is the dimension of x.
	Dim() int
	// LogPriorLik returns the log prior density and log likelihood at x.
	// Non-nil gradPrior and gradLik receive their gradients; moves that
	// need no gradient pass nil. An error means log-density −∞.
	LogPriorLik(x, gradPrior, gradLik []float64) (logPrior, logLik float64, err error)
	// SamplePrior draws x from the prior.
	SamplePrior(rng *rand.Rand, x []float64) error
}

// SMCSettings configures RunSMC. A nil *SMCSettings, and zero fields,
// take the defaults, which are the paper's except ESSFraction.
type SMCSettings struct {
	// Particles is the number of particles N (1000).
	Particles int
	// Seed seeds every random stream: particle i at step t uses
	// rand.NewPCG(Seed, i + t<<32); resampling uses its own stream.
	Seed uint64
	// ESSFraction is the conditional ESS, as a fraction of N, that picks
	// the next temperature by bisection (0.9; the paper's 0.5 takes a third
	// of the evaluations, but its runs' log evidences scatter 4–5 times as
	// much per evaluation when the moves mix slowly: bench/README.md, "SMC
	// evidence (issue 26)").
	ESSFraction float64
	// ResampleThreshold resamples (systematically) when the ESS falls
	// below this fraction of N; values ≥ 1 resample every step (1, the
	// paper's choice).
	ResampleThreshold float64
	// Move is the rejuvenation move (SMCEigenRWM{}).
	Move SMCMove
	// PilotMoves is the number of moves before the count is set (3).
	PilotMoves int
	// MoveTolerance is ε in R = ⌈log ε / log(1 − a)⌉, the number of further
	// moves, a being the lowest pilot acceptance rate (0.001).
	MoveTolerance float64
	// MaxMoves bounds the moves per temperature (100).
	MaxMoves int
	// TargetAccept is the acceptance rate the move scale is adapted to
	// (0.234 for random walks, 0.8 for NUTS).
	TargetAccept float64
	// MaxSteps bounds the number of temperatures (10000).
	MaxSteps int
	// Temperatures, when non-nil, is a fixed schedule β₁ < … < 1 (β₀ = 0
	// implied; a leading 0 is ignored) used instead of choosing each
	// temperature from the particles. With a schedule fixed in advance
	// the evidence estimate exp(LogZ) is unbiased; choosing it from the
	// same particles that weigh the step is not (see RunSMC).
	Temperatures []float64
	// Workers is the number of goroutines (GOMAXPROCS); the result does
	// not depend on it.
	Workers int
	// Progress, when non-nil, is called after each temperature step (Done
	// counts the steps, Beta is the new inverse temperature, Total is 0).
	Progress func(Progress)
}

// SMCResult is the output of RunSMC.
type SMCResult struct {
	// Dim is the dimension; Particles holds N particles row-major (N×Dim).
	Dim       int
	Particles []float64
	// LogWeights are the particles' normalized log weights (all −log N
	// after a final resampling).
	LogWeights []float64
	// LogPrior and LogLik are each particle's log prior and likelihood.
	LogPrior, LogLik []float64
	// LogZ estimates the log evidence log ∫ prior·lik, the sum of
	// LogZIncrements, one per temperature step.
	LogZ           float64
	LogZIncrements []float64
	// Temperatures are β₀ = 0 < β₁ < … = 1.
	Temperatures []float64
	// ESS is the effective sample size after each reweighting, before
	// resampling; Resampled says whether that step resampled.
	ESS       []float64
	Resampled []bool
	// Acceptance is the mean acceptance rate of each step's moves,
	// PilotAcceptance the lowest pilot rate, and Moves their number.
	Acceptance, PilotAcceptance []float64
	Moves                       []int
	// Evals counts log-density evaluations (leapfrog steps for NUTS).
	Evals int
}

// Particle returns particle i, a slice of r.Particles.
func (r *SMCResult) Particle(i int) []float64 { return r.Particles[i*r.Dim : (i+1)*r.Dim] }

func (s *SMCSettings) withDefaults() SMCSettings {
	o := settingsOf(s)
	setDefault(&o.Particles, 1000)
	setDefault(&o.ESSFraction, 0.9)
	setDefault(&o.ResampleThreshold, 1)
	setDefault(&o.PilotMoves, 3)
	setDefault(&o.MoveTolerance, 0.001)
	setDefault(&o.MaxMoves, 100)
	if o.Move == nil {
		o.Move = SMCEigenRWM{}
	}
	setDefault(&o.TargetAccept, o.Move.defaultTargetAccept())
	setDefault(&o.MaxSteps, 10000)
	setDefault(&o.Workers, runtime.GOMAXPROCS(0))
	return o
}

// smc is one run's working state.
type smc struct {
	set    SMCSettings
	n, dim int
	models []TemperedModel
	x      []float64 // N×dim particles
	lp, ll []float64
	logW   []float64
	acc    []float64 // per-particle acceptance of the current move
	evals  []int     // per-particle evaluation counts
	pcgs   []rand.PCG
	rngs   []*rand.Rand
	beta   float64
	step   int
	scale  float64 // random-walk factor c, or NUTS step size
	nblk   int     // leave-out blocks (see moments)
	mover  smcMover
	props  [][]float64 // per-worker proposals
}

// temperedTarget is prior + β·likelihood as a Target, for NUTS moves.
type temperedTarget struct {
	m      TemperedModel
	beta   float64
	gp, gl []float64
}

func (t *temperedTarget) Dim() int { return t.m.Dim() }

func (t *temperedTarget) LogDensityGrad(x, grad []float64) (float64, error) {
	lp, ll, err := t.m.LogPriorLik(x, t.gp, t.gl)
	if err != nil {
		return math.Inf(-1), err
	}
	for i := range grad {
		grad[i] = t.gp[i] + t.beta*t.gl[i]
	}
	return tempered(lp, ll, t.beta), nil
}

// tempered returns lp + β·ll, taking 0·(−∞) as −∞ only where the prior
// itself vanishes, so that β = 0 is exactly the prior.
func tempered(lp, ll, beta float64) float64 {
	if math.IsNaN(lp) || math.IsNaN(ll) || math.IsInf(lp, -1) {
		return math.Inf(-1)
	}
	if beta == 0 {
		return lp
	}
	return lp + beta*ll
}

// RunSMC runs an adaptive-tempering SMC sampler from the prior to the
// posterior of the model factory builds, one model per worker goroutine.
// Each temperature is chosen by bisection so the conditional ESS of the
// incremental weights is ESSFraction·N; particles are resampled
// systematically and moved by PilotMoves moves and then
// R = ⌈log ε / log(1 − a)⌉ more; the moves of each tenth of the particles
// are fitted to the other nine tenths (a move fitted to the particle it
// moves biases log Z upward). The result is identical for a given seed
// whatever Workers and GOMAXPROCS are.
//
// exp(LogZ) is an unbiased estimate of the evidence up to the small bias
// of choosing temperatures and moves from the particles (none with a fixed
// Temperatures schedule, apart from the moves' fit), so LogZ itself is low
// by about half its variance. Independent runs (different Seeds) give its
// standard error: the spread of their LogZ, or, pooling them as the log of
// the mean evidence, its delta-method error, which holds while the runs'
// LogZ spread by well under a nat.
func RunSMC(ctx context.Context, factory func(worker int) (TemperedModel, error), settings *SMCSettings) (*SMCResult, error) {
	if factory == nil {
		return nil, errors.New("kernels: nil model factory")
	}
	set := settings.withDefaults()
	switch {
	case set.Particles < 2:
		return nil, fmt.Errorf("kernels: %d particles, want at least 2", set.Particles)
	case !(set.ESSFraction > 0 && set.ESSFraction < 1):
		return nil, fmt.Errorf("kernels: ESS fraction %v, want in (0, 1)", set.ESSFraction)
	case set.ResampleThreshold < 0:
		return nil, fmt.Errorf("kernels: resampling threshold %v", set.ResampleThreshold)
	case set.PilotMoves < 1 || set.MaxMoves < set.PilotMoves:
		return nil, fmt.Errorf("kernels: %d pilot moves and at most %d moves", set.PilotMoves, set.MaxMoves)
	case !(set.MoveTolerance > 0 && set.MoveTolerance < 1):
		return nil, fmt.Errorf("kernels: move tolerance %v, want in (0, 1)", set.MoveTolerance)
	case !(set.TargetAccept > 0 && set.TargetAccept < 1):
		return nil, fmt.Errorf("kernels: target acceptance %v, want in (0, 1)", set.TargetAccept)
	case set.Workers < 1:
		return nil, fmt.Errorf("kernels: %d workers", set.Workers)
	}
	if err := checkSchedule(set.Temperatures); err != nil {
		return nil, err
	}
	set.Workers = min(set.Workers, set.Particles)
	s := &smc{set: set, n: set.Particles}
	for w := 0; w < set.Workers; w++ {
		m, err := factory(w)
		if err != nil {
			return nil, fmt.Errorf("kernels: worker %d: model: %w", w, err)
		}
		if m == nil {
			return nil, fmt.Errorf("kernels: worker %d: factory returned a nil model", w)
		}
		if w == 0 {
			s.dim = m.Dim()
			if s.dim <= 0 {
				return nil, fmt.Errorf("%w: model dimension %d", ErrDimension, s.dim)
			}
		} else if m.Dim() != s.dim {
			return nil, fmt.Errorf("%w: worker %d's model has dimension %d, worker 0's %d", ErrDimension, w, m.Dim(), s.dim)
		}
		s.models = append(s.models, m)
	}
	s.alloc()
	return s.run(ctx)
}

func (s *smc) alloc() {
	n, d := s.n, s.dim
	s.x = make([]float64, n*d)
	s.lp, s.ll, s.logW, s.acc = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	s.evals = make([]int, n)
	s.pcgs = make([]rand.PCG, n)
	s.rngs = make([]*rand.Rand, n)
	for i := range s.rngs {
		s.rngs[i] = rand.New(&s.pcgs[i])
	}
	s.nblk = blocks(n)
	s.props = make([][]float64, len(s.models))
	for w := range s.props {
		s.props[w] = make([]float64, d)
	}
}

// parallel runs f(worker, i) for every particle i, worker w taking a fixed
// contiguous block; f must touch only particle i's state and worker w's
// scratch, so the outcome does not depend on the schedule.
func (s *smc) parallel(f func(w, i int) error) error {
	W := len(s.models)
	errs := make([]error, W)
	var wg sync.WaitGroup
	for w := 0; w < W; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w * s.n / W; i < (w+1)*s.n/W; i++ {
				if err := f(w, i); err != nil {
					errs[w] = err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *smc) particle(i int) []float64 { return s.x[i*s.dim : (i+1)*s.dim] }

// seedStreams points every particle's stream at (seed, i + step<<32).
func (s *smc) seedStreams(step int) {
	for i := range s.pcgs {
		s.pcgs[i].Seed(s.set.Seed, uint64(i)+uint64(step)<<32)
	}
}

func (s *smc) evalPoint(w int, x []float64) (lp, ll float64) {
	lp, ll, err := s.models[w].LogPriorLik(x, nil, nil)
	if err != nil || math.IsNaN(lp) || math.IsNaN(ll) || math.IsInf(lp, 1) || math.IsInf(ll, 1) {
		return math.Inf(-1), math.Inf(-1)
	}
	return lp, ll
}

func (s *smc) run(ctx context.Context) (*SMCResult, error) {
	n := s.n
	res := &SMCResult{Dim: s.dim, Temperatures: []float64{0}}

	s.seedStreams(0)
	err := s.parallel(func(w, i int) error {
		x := s.particle(i)
		if err := s.models[w].SamplePrior(s.rngs[i], x); err != nil {
			return fmt.Errorf("kernels: prior draw for particle %d: %w", i, err)
		}
		s.lp[i], s.ll[i] = s.evalPoint(w, x)
		s.evals[i]++
		return nil
	})
	if err != nil {
		return nil, err
	}
	finite := 0
	for i := range s.lp {
		if !math.IsInf(s.lp[i], -1) && !math.IsInf(s.ll[i], -1) {
			finite++
		}
	}
	if finite == 0 {
		return nil, fmt.Errorf("kernels: no prior draw has a finite log prior and likelihood")
	}
	logN := math.Log(float64(n))
	for i := range s.logW {
		s.logW[i] = -logN
	}
	resampleRng := rand.New(rand.NewPCG(s.set.Seed^0x9e3779b97f4a7c15, 0))
	sched := s.set.Temperatures
	if len(sched) > 0 && sched[0] == 0 {
		sched = sched[1:]
	}
	s.mover = s.set.Move.start(s)

	for step := 1; s.beta < 1; step++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if step > s.set.MaxSteps {
			return nil, fmt.Errorf("kernels: SMC did not reach β = 1 in %d steps (β = %v)", s.set.MaxSteps, s.beta)
		}
		var next float64
		if sched != nil {
			next = sched[step-1]
		} else {
			next = s.nextBeta()
		}
		incr := s.reweight(next - s.beta)
		if math.IsNaN(incr) || math.IsInf(incr, 0) {
			return nil, fmt.Errorf("kernels: SMC step %d: every particle has zero weight at β = %v", step, next)
		}
		s.beta = next
		res.LogZ += incr
		res.LogZIncrements = append(res.LogZIncrements, incr)
		res.Temperatures = append(res.Temperatures, next)
		ess := s.ess()
		res.ESS = append(res.ESS, ess)
		resample := ess < s.set.ResampleThreshold*float64(n) || s.set.ResampleThreshold >= 1
		if resample {
			s.resample(resampleRng)
		}
		res.Resampled = append(res.Resampled, resample)

		s.seedStreams(step)
		s.step = step
		acc, pilot, moves, err := s.move()
		if err != nil {
			return nil, fmt.Errorf("kernels: SMC step %d: %w", step, err)
		}
		res.Acceptance = append(res.Acceptance, acc)
		res.PilotAcceptance = append(res.PilotAcceptance, pilot)
		res.Moves = append(res.Moves, moves)
		if s.set.Progress != nil {
			s.set.Progress(Progress{Done: step, Beta: s.beta})
		}
	}
	res.Particles = s.x
	res.LogWeights = s.logW
	res.LogPrior, res.LogLik = s.lp, s.ll
	for _, e := range s.evals {
		res.Evals += e
	}
	return res, nil
}

// incrLogWeights returns log Σ W_i·exp(Δβ·ll_i) and, through sq, the log of
// Σ W_i·exp(2Δβ·ll_i): the two sums of the conditional ESS.
func (s *smc) incrSums(dBeta float64) (lsum, lsq float64) {
	lsum, lsq = math.Inf(-1), math.Inf(-1)
	for i, lw := range s.logW {
		if math.IsInf(lw, -1) {
			continue
		}
		inc := s.incr(i, dBeta)
		lsum = logAddExp(lsum, lw+inc)
		lsq = logAddExp(lsq, lw+2*inc)
	}
	return lsum, lsq
}

// incr is particle i's log incremental weight for a step Δβ; a vanishing
// likelihood has weight zero at any positive temperature.
func (s *smc) incr(i int, dBeta float64) float64 {
	if math.IsInf(s.ll[i], -1) || math.IsInf(s.lp[i], -1) {
		return math.Inf(-1)
	}
	return dBeta * s.ll[i]
}

// cess is the conditional ESS fraction (Σ W_i w_i)² / Σ W_i w_i² (Zhou,
// Johansen & Aston 2016); after resampling it equals the ESS fraction.
func (s *smc) cess(dBeta float64) float64 {
	lsum, lsq := s.incrSums(dBeta)
	if math.IsInf(lsq, -1) {
		return 0
	}
	return math.Exp(2*lsum - lsq)
}

// nextBeta bisects for the temperature whose conditional ESS fraction is
// the target, or returns 1 when even β = 1 keeps it above the target.
func (s *smc) nextBeta() float64 {
	target := s.set.ESSFraction
	if s.cess(1-s.beta) >= target {
		return 1
	}
	lo, hi := s.beta, 1.0
	for it := 0; it < 100 && hi-lo > 1e-14*math.Max(1, hi); it++ {
		mid := 0.5 * (lo + hi)
		if s.cess(mid-s.beta) >= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	if lo == s.beta {
		// The ESS collapses for any representable step; take the
		// smallest one so the sampler still advances.
		return hi
	}
	return lo
}

// reweight multiplies the weights by the incremental weights, normalizes,
// and returns the log evidence increment log Σ W_i·w_i.
func (s *smc) reweight(dBeta float64) float64 {
	lsum, _ := s.incrSums(dBeta)
	if math.IsInf(lsum, -1) {
		return math.NaN()
	}
	for i := range s.logW {
		s.logW[i] += s.incr(i, dBeta) - lsum
	}
	return lsum
}

func (s *smc) ess() float64 {
	sq := 0.0
	for _, lw := range s.logW {
		w := math.Exp(lw)
		sq += w * w
	}
	return 1 / sq
}

// resample draws N ancestors systematically: one uniform, N evenly spaced
// points through the cumulative weights.
func (s *smc) resample(rng *rand.Rand) {
	n, d := s.n, s.dim
	newX := make([]float64, n*d)
	newLp, newLl := make([]float64, n), make([]float64, n)
	cum := make([]float64, n)
	c := 0.0
	for j, lw := range s.logW {
		c += math.Exp(lw)
		cum[j] = c
	}
	u := rng.Float64()
	j := 0
	for i := 0; i < n; i++ {
		pos := (u + float64(i)) / float64(n) * c
		for j < n-1 && cum[j] < pos {
			j++
		}
		// Rounding can strand the last position past a zero-weight
		// tail; fall back to the nearest particle with weight.
		k := j
		for k > 0 && math.IsInf(s.logW[k], -1) {
			k--
		}
		copy(newX[i*d:(i+1)*d], s.particle(k))
		newLp[i], newLl[i] = s.lp[k], s.ll[k]
	}
	s.x, s.lp, s.ll = newX, newLp, newLl
	logN := math.Log(float64(n))
	for i := range s.logW {
		s.logW[i] = -logN
	}
}

// adaptBlocks is the number of blocks of particles whose moves are fitted
// without them (see moments).
const adaptBlocks = 10

// blocks returns the number of leave-out blocks for n particles: at most
// adaptBlocks, and at least 4 particles per block.
func blocks(n int) int { return max(1, min(adaptBlocks, n/4)) }

// block returns the leave-out block of particle i.
func (s *smc) block(i int) int { return i * s.nblk / s.n }

// moments fits the moves to the particles: the particles are cut into
// s.nblk blocks of consecutive indices, and the moves of a block's
// particles use the weighted covariance of the other blocks' particles.
//
// A move whose proposal depends on the particle it moves is not invariant
// for the tempered target (its reverse move would use another
// covariance), and the error does not average out: on a 16-dimensional
// Gaussian posterior with 400 particles, proposals from the covariance of
// all particles made log Z 0.7 nats too high (0.24 with 1600 particles;
// kernels' TestSMCSignFlipRuns, bench/README.md "SMC evidence (issue
// 26)"). Leaving a particle's block out removes that dependence; systematic
// resampling puts a particle's copies at consecutive indices, so they
// mostly fall in the same block too.
func (s *smc) moments() error {
	n, d := s.n, s.dim
	// gonum divides by Σw − 1, so the weights sum to N, not 1.
	w := make([]float64, n)
	for i, lw := range s.logW {
		w[i] = float64(n) * math.Exp(lw)
	}
	covs := make([]*mat.SymDense, s.nblk)
	var ridge float64
	for b := range covs {
		lo, hi := b*n/s.nblk, (b+1)*n/s.nblk
		rows, ws := s.x, w
		if s.nblk > 1 {
			rows = make([]float64, 0, (n-(hi-lo))*d)
			rows = append(append(rows, s.x[:lo*d]...), s.x[hi*d:]...)
			ws = append(append(make([]float64, 0, n-(hi-lo)), w[:lo]...), w[hi:]...)
		}
		x := mat.NewDense(len(ws), d, rows)
		cov := mat.NewSymDense(d, nil)
		stat.CovarianceMatrix(cov, x, ws)
		// A collapsed population (all particles equal in some direction)
		// would freeze the moves; a small ridge keeps every direction open.
		tr := 0.0
		for j := 0; j < d; j++ {
			tr += cov.At(j, j)
		}
		ridge = 1e-10 * math.Max(tr/float64(d), 1e-300)
		for j := 0; j < d; j++ {
			cov.SetSym(j, j, cov.At(j, j)+ridge)
		}
		covs[b] = cov
	}
	return s.mover.adapt(covs, ridge)
}

// move rejuvenates the particles at the current temperature and returns the
// mean acceptance of all moves, the lowest pilot acceptance and the number
// of moves.
func (s *smc) move() (mean, pilot float64, moves int, err error) {
	if err := s.moments(); err != nil {
		return 0, 0, 0, err
	}
	pilot = 1
	total := 0.0
	one := func() (float64, error) {
		if err := s.parallel(func(w, i int) error { s.mover.move(w, i); return nil }); err != nil {
			return 0, err
		}
		a := floats.Sum(s.acc) / float64(s.n)
		total += a
		moves++
		return a, nil
	}
	for m := 0; m < s.set.PilotMoves; m++ {
		a, err := one()
		if err != nil {
			return 0, 0, 0, err
		}
		pilot = math.Min(pilot, a)
		s.adaptScale(a)
	}
	more := s.set.MaxMoves - s.set.PilotMoves
	if pilot < 1 && pilot > 0 {
		more = min(more, int(math.Ceil(math.Log(s.set.MoveTolerance)/math.Log1p(-pilot))))
	} else if pilot >= 1 {
		more = 0
	}
	for m := 0; m < more; m++ {
		if _, err := one(); err != nil {
			return 0, 0, 0, err
		}
	}
	if err := s.mover.finish(); err != nil {
		return 0, 0, 0, err
	}
	return total / float64(moves), pilot, moves, nil
}

// adaptScale nudges the move's scale toward the target acceptance between
// moves; log-acceptance falls roughly linearly in the log scale near the
// optimum, so a damped step in log space converges without oscillating.
func (s *smc) adaptScale(a float64) {
	step := math.Max(-1, math.Min(1, s.mover.gain()*(a-s.set.TargetAccept)))
	s.scale *= math.Exp(step)
}

// checkSchedule checks a fixed temperature schedule: increasing, in
// (0, 1], ending at 1; an optional leading 0 is β₀.
func checkSchedule(b []float64) error {
	if b == nil {
		return nil
	}
	if len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	if len(b) == 0 || b[len(b)-1] != 1 {
		return fmt.Errorf("kernels: temperature schedule %v does not end at 1", b)
	}
	prev := 0.0
	for i, v := range b {
		if !(v > prev && v <= 1) {
			return fmt.Errorf("kernels: temperature schedule not increasing in (0, 1] at entry %d (%v after %v)", i, v, prev)
		}
		prev = v
	}
	return nil
}
