package flows

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/trjgo/trj/internal/scalar"
	"github.com/trjgo/trj/internal/training"
)

// TrainOptions controls maximum-likelihood training with Adam. The zero
// value is valid and trains with good defaults: every field left zero
// whose zero would be meaningless (Iterations, LearningRate, Decay1,
// DecaySteps, Decay2, BatchSize, ValidateEvery, Workers) takes its value
// from DefaultTrainOptions, and the others keep their zero meaning (no
// batch doubling, no validation split, no early stopping, equal weights,
// seed 0). DefaultTrainOptions and ConditionalTrainOptions give the
// paper's settings.
type TrainOptions struct {
	// Iterations is the maximum number of Adam steps.
	Iterations int
	// LearningRate is the initial step size. At step t (from 0) the rate is
	// LearningRate·Decay1^min(t, DecaySteps)·Decay2^max(0, t−DecaySteps).
	LearningRate float64
	Decay1       float64
	DecaySteps   int
	Decay2       float64
	// BatchSize is the initial minibatch size; it doubles at each iteration
	// listed in DoubleAt. Minibatches are drawn with replacement with
	// probabilities proportional to the sample weights.
	BatchSize int
	DoubleAt  []int
	// ValidationFraction of the samples (chosen at random from Seed) is held
	// out; 0 trains on everything.
	ValidationFraction float64
	// ValidateEvery is the spacing, in iterations, of validation-loss
	// evaluations on the whole held-out set.
	ValidateEvery int
	// StopWindow, when positive, enables early stopping: at every multiple
	// of StopWindow iterations the mean monitored loss over the window (the
	// validation loss if there is a validation set, else the minibatch
	// training loss) is compared with the best earlier window mean, and
	// training stops when it improved by less than MinImprovement. The
	// parameters at the end of the best window are kept.
	StopWindow     int
	MinImprovement float64
	// Weights are optional non-negative sample weights (nil: equal).
	Weights []float64
	// Seed determines the initial weights, the validation split, the
	// minibatches and any auxiliary draws.
	Seed uint64
	// Workers is the number of goroutines sharing each minibatch gradient
	// (0 means 2; minibatches smaller than 64 are not split). Partial gradients are summed in a fixed order, so a run is
	// reproducible for a given Seed and Workers; different Workers values
	// differ by floating-point rounding (and, for conditional flows, in which
	// auxiliary draws each sample receives).
	Workers int
	// Progress, if non-nil, is called after every iteration.
	Progress func(Progress)
	// Cache, if non-nil, lends compiled training losses between fits of
	// the same architecture (see TrainCache); nil compiles them per fit.
	Cache *TrainCache
}

// Progress reports the state of training after one iteration, in the shape
// of kernels.Progress and trj.Progress: Done Adam steps of at most Total
// (early stopping may end the fit sooner).
type Progress struct {
	Done, Total    int
	Iteration      int     // Done − 1
	Loss           float64 // minibatch mean negative log-likelihood
	ValidationLoss float64 // latest validation loss, NaN if none yet
	LearningRate   float64
	BatchSize      int
}

// TrainReport summarises a training run.
type TrainReport struct {
	Iterations     int       // Adam steps taken
	Loss           []float64 // minibatch mean negative log-likelihood per iteration
	ValidationLoss []float64 // validation losses, every ValidateEvery iterations
	EarlyStopped   bool
	Skipped        int           // steps skipped because the loss or gradient was not finite
	Elapsed        time.Duration // wall-clock training time
}

// DefaultTrainOptions returns the paper's RQMA training settings: Adam with
// learning rate 3e-3 decayed by 0.992 per step for 200 steps then by 0.9971,
// 1000 iterations, minibatch 128 doubled at 250, 500 and 750, no early
// stopping, 2 workers.
func DefaultTrainOptions() TrainOptions {
	return TrainOptions{
		Iterations:    1000,
		LearningRate:  3e-3,
		Decay1:        0.992,
		DecaySteps:    200,
		Decay2:        0.9971,
		BatchSize:     128,
		DoubleAt:      []int{250, 500, 750},
		ValidateEvery: 10,
		Workers:       2,
	}
}

// ConditionalTrainOptions returns the paper's conditional-flow settings: at
// most 1000 iterations, minibatch 128 doubled every 200, stopping when the
// 100-iteration mean loss improves by less than 0.01.
func ConditionalTrainOptions() TrainOptions {
	o := DefaultTrainOptions()
	o.DoubleAt = []int{200, 400, 600, 800}
	o.StopWindow = 100
	o.MinImprovement = 0.01
	return o
}

// fillDefaults replaces the zero fields that have defaults.
func (o *TrainOptions) fillDefaults() {
	d := DefaultTrainOptions()
	def := func(v *int, dv int) {
		if *v == 0 {
			*v = dv
		}
	}
	deff := func(v *float64, dv float64) {
		if *v == 0 {
			*v = dv
		}
	}
	def(&o.Iterations, d.Iterations)
	deff(&o.LearningRate, d.LearningRate)
	deff(&o.Decay1, d.Decay1)
	def(&o.DecaySteps, d.DecaySteps)
	deff(&o.Decay2, d.Decay2)
	def(&o.BatchSize, d.BatchSize)
	def(&o.ValidateEvery, d.ValidateEvery)
	def(&o.Workers, d.Workers)
}

// validate fills the defaults of zero fields and checks the options for
// rows samples.
func (o *TrainOptions) validate(rows int) error {
	o.fillDefaults()
	switch {
	case o.Iterations < 1:
		return fmt.Errorf("flows: %d iterations", o.Iterations)
	case !(o.LearningRate > 0) || !(o.Decay1 > 0) || !(o.Decay2 > 0) || o.DecaySteps < 0:
		return errors.New("flows: learning rate and decays must be positive")
	case o.BatchSize < 1:
		return fmt.Errorf("flows: batch size %d", o.BatchSize)
	case o.ValidationFraction < 0 || o.ValidationFraction >= 1:
		return fmt.Errorf("flows: validation fraction %v", o.ValidationFraction)
	case o.ValidationFraction > 0 && o.ValidateEvery < 1:
		return fmt.Errorf("flows: ValidateEvery %d", o.ValidateEvery)
	case o.StopWindow < 0 || o.MinImprovement < 0:
		return errors.New("flows: negative stopping window or improvement")
	case o.Workers < 0:
		return fmt.Errorf("flows: %d workers", o.Workers)
	case rows < 2:
		return fmt.Errorf("flows: %d samples, need at least 2", rows)
	case o.Weights != nil && len(o.Weights) != rows:
		return fmt.Errorf("flows: %d weights for %d samples", len(o.Weights), rows)
	}
	pos := 0
	for _, w := range o.Weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return fmt.Errorf("flows: invalid weight %v", w)
		}
		if w > 0 {
			pos++
		}
	}
	if o.Weights != nil && pos == 0 {
		return errors.New("flows: all sample weights (TrainOptions.Weights) are zero")
	}
	return nil
}

func (o *TrainOptions) learningRate(t int) float64 {
	return training.LearningRate(o.LearningRate, o.Decay1, o.DecaySteps, o.Decay2, t)
}

func (o *TrainOptions) batchSize(t int) int { return training.BatchSize(o.BatchSize, o.DoubleAt, t) }

// learner is a flow being trained: its flat parameters and a way to make
// per-goroutine workers.
type learner interface {
	params() []float64
	newWorker() worker
	// freeSpans lists the index ranges of the parameters that can change;
	// the gradient is zero outside them (masked weights).
	freeSpans() [][2]int
	// setup sets the number of workers and the cache of compiled losses,
	// before any newWorker; release ends the fit.
	setup(workers int, cache *TrainCache)
	release()
}

// worker evaluates Σ_r w_r·(−log q(x_r)) over sample rows idx (w_r = 1 when
// wts is nil), writing the gradient with respect to the parameters into g
// (overwriting every free parameter's entry) when g is non-nil. rng supplies any per-batch randomness. A non-finite
// loss is returned as NaN without error; an error means the batch could not
// be evaluated at all.
type worker interface {
	batch(p []float64, idx []int, wts []float64, rng randSource, g []float64) (float64, error)
}

// workerRows bounds the scratch of a worker; larger batches are chunked.
// At 128 rows gonum multiplies the rows×hidden blocks serially: from 256 it
// splits them over goroutines, which only adds overhead when the training
// workers already occupy the cores.
const workerRows = 128

// minWorkerRows is the smallest share of a minibatch worth a goroutine.
const minWorkerRows = 32

// train runs Adam on l over rows samples (the learner maps row indices to
// data). ctx is checked before every step: once it is done, train returns
// the report so far and ctx's error, wrapped.
func train(ctx context.Context, l learner, rows int, weights []float64, o TrainOptions) (*TrainReport, error) {
	if ctx == nil {
		return nil, errors.New("flows: nil context")
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(o.Seed, 0x7a1a))
	split, err := training.NewSplit(rng, rows, o.ValidationFraction, weights)
	if err != nil {
		return nil, fmt.Errorf("flows: %w", err)
	}
	l.setup(o.Workers, o.Cache)
	defer l.release()
	tw := newTeam(l, o.Workers)
	p := l.params()
	spans := l.freeSpans()
	adam := training.NewAdam(len(p))
	stop := training.NewEarlyStop(o.StopWindow, o.MinImprovement)
	rep := &TrainReport{}
	lastVal := math.NaN()
	idx := make([]int, 0, o.batchSize(o.Iterations))
	for t := 0; t < o.Iterations; t++ {
		if err := ctx.Err(); err != nil {
			rep.Elapsed = time.Since(start)
			return rep, fmt.Errorf("flows: training stopped after %d of %d iterations: %w", t, o.Iterations, err)
		}
		bs := o.batchSize(t)
		idx = split.Minibatch(idx, bs, rng)
		loss, ok, err := tw.gradient(p, idx, spans, rng.Uint64())
		if err != nil {
			return rep, err
		}
		lr := o.learningRate(t)
		if !ok {
			rep.Skipped++
		} else {
			adam.Step(p, tw.g, spans, lr, t+1-rep.Skipped)
		}
		rep.Loss = append(rep.Loss, loss)
		rep.Iterations = t + 1
		if len(split.Val) > 0 && (t+1)%o.ValidateEvery == 0 {
			if lastVal, err = tw.validationLoss(p, split); err != nil {
				return rep, err
			}
			rep.ValidationLoss = append(rep.ValidationLoss, lastVal)
			stop.Add(lastVal)
		} else if len(split.Val) == 0 && scalar.Finite(loss) {
			stop.Add(loss)
		}
		if o.Progress != nil {
			o.Progress(Progress{Done: t + 1, Total: o.Iterations, Iteration: t, Loss: loss, ValidationLoss: lastVal, LearningRate: lr, BatchSize: bs})
		}
		if stop.Stop(t, p) {
			rep.EarlyStopped = true
			break
		}
	}
	rep.Elapsed = time.Since(start)
	if rep.Skipped == rep.Iterations {
		return rep, fmt.Errorf("flows: every training step had a non-finite loss or gradient: %w", ErrNonFinite)
	}
	return rep, nil
}

// team is the workers of a fit, each with its random stream and partial
// gradient; worker 0 writes its partial gradient straight into g, where the
// reduction starts.
type team struct {
	workers []worker
	grads   [][]float64
	rngs    []*rand.Rand
	pcgs    []*rand.PCG
	losses  []float64
	g       []float64
}

func newTeam(l learner, nw int) *team {
	np := len(l.params())
	tw := &team{
		workers: make([]worker, nw),
		grads:   make([][]float64, nw),
		rngs:    make([]*rand.Rand, nw),
		pcgs:    make([]*rand.PCG, nw),
		losses:  make([]float64, nw),
		g:       make([]float64, np),
	}
	for i := range tw.workers {
		tw.workers[i] = l.newWorker()
		tw.grads[i] = tw.g
		if i > 0 {
			tw.grads[i] = make([]float64, np)
		}
		tw.pcgs[i] = rand.NewPCG(0, 0)
		tw.rngs[i] = rand.New(tw.pcgs[i])
	}
	return tw
}

// gradient sets g to the mean gradient over the minibatch idx and returns
// the mean loss and whether both are finite. seed is the iteration's one
// master draw, whatever the number of workers, so that the minibatch
// sequence does not depend on Workers.
func (tw *team) gradient(p []float64, idx []int, spans [][2]int, seed uint64) (float64, bool, error) {
	bs := len(idx)
	for i := range tw.pcgs {
		tw.pcgs[i].Seed(seed, uint64(i))
	}
	// Small minibatches are not split: below minWorkerRows rows per
	// goroutine the smaller products cost more than the parallelism saves.
	use := min(len(tw.workers), max(1, bs/minWorkerRows))
	loss, err := parallel(tw.workers[:use], p, idx, nil, tw.rngs[:use], tw.grads[:use], tw.losses[:use])
	if err != nil {
		return loss, false, err
	}
	loss /= float64(bs)
	// Reduce in worker order into g (worker 0's buffer), scale, and leave
	// the other workers' buffers zeroed for the next iteration, in one pass
	// over the free parameters.
	inv := 1 / float64(bs)
	ok := scalar.Finite(loss)
	g := tw.g
	for _, sp := range spans {
		for i := sp[0]; i < sp[1]; i++ {
			s := g[i]
			for _, gk := range tw.grads[1:] {
				s += gk[i]
				gk[i] = 0
			}
			s *= inv
			g[i] = s
			ok = ok && !math.IsNaN(s) && !math.IsInf(s, 0)
		}
	}
	return loss, ok, nil
}

// validationLoss is the mean loss over the whole validation set, with the
// workers' streams seeded alike at every evaluation.
func (tw *team) validationLoss(p []float64, split *training.Split) (float64, error) {
	for i := range tw.pcgs {
		tw.pcgs[i].Seed(0xfeed, uint64(i))
	}
	tot, err := parallel(tw.workers, p, split.Val, split.ValWeights, tw.rngs, nil, tw.losses)
	if err != nil {
		return math.NaN(), err
	}
	return tot / split.ValTotal(), nil
}

// parallel splits idx into contiguous parts, one per worker, runs them
// concurrently and returns the summed loss, summed in worker order.
func parallel(ws []worker, p []float64, idx []int, wts []float64, rngs []*rand.Rand, grads [][]float64, losses []float64) (float64, error) {
	nw := len(ws)
	errs := make([]error, nw)
	var wg sync.WaitGroup
	for k := range ws {
		lo := k * len(idx) / nw
		hi := (k + 1) * len(idx) / nw
		var g []float64
		if grads != nil {
			g = grads[k] // overwritten by the worker
		}
		var wk []float64
		if wts != nil {
			wk = wts[lo:hi]
		}
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			losses[k], errs[k] = ws[k].batch(p, idx[lo:hi], wk, rngs[k], g)
		}(k)
	}
	wg.Wait()
	s := 0.0
	for k, l := range losses {
		if errs[k] != nil {
			return math.NaN(), errs[k]
		}
		s += l
	}
	return s, nil
}
