package flows

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/trjgo/trj/internal/scalar"
)

func smallData(rows int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := make([][]float64, rows)
	for r := range x {
		a := rng.NormFloat64()
		x[r] = []float64{a, math.Exp(0.5*a) + 0.3*rng.NormFloat64()}
	}
	return x
}

func smallConfig() RQMAConfig {
	return RQMAConfig{Layers: 2, Bins: 6, HiddenPerDim: 4, SigmoidScale: 1}
}

func TestTrainDeterministic(t *testing.T) {
	x := smallData(300, 1)
	o := DefaultTrainOptions()
	o.Iterations = 30
	o.Seed = 5
	f1, r1, err := FitRQMA(context.Background(), x, smallConfig(), o)
	if err != nil {
		t.Fatal(err)
	}
	f2, _, _ := FitRQMA(context.Background(), x, smallConfig(), o)
	for i := range f1.params {
		if f1.params[i] != f2.params[i] {
			t.Fatalf("parameter %d differs between identical runs", i)
		}
	}
	o.Workers = 1
	f3, r3, _ := FitRQMA(context.Background(), x, smallConfig(), o)
	// Same minibatches, different summation order: losses agree closely.
	for i := range r1.Loss {
		if math.Abs(r1.Loss[i]-r3.Loss[i]) > 1e-8*math.Abs(r1.Loss[i]) {
			t.Fatalf("iteration %d: loss %v with 2 workers, %v with 1", i, r1.Loss[i], r3.Loss[i])
		}
	}
	_ = f3
	if !f1.net.masksRespected(f1.params) {
		t.Error("training moved a masked weight")
	}
	// Training lowers the loss.
	if !(r1.Loss[len(r1.Loss)-1] < r1.Loss[0]) {
		t.Errorf("loss went from %v to %v", r1.Loss[0], r1.Loss[len(r1.Loss)-1])
	}
}

func TestTrainScheduleAndProgress(t *testing.T) {
	o := DefaultTrainOptions()
	if got := o.learningRate(0); got != 3e-3 {
		t.Errorf("initial rate %v", got)
	}
	want := 3e-3 * math.Pow(0.992, 200) * math.Pow(0.9971, 100)
	if got := o.learningRate(300); math.Abs(got-want) > 1e-15 {
		t.Errorf("rate at 300: %v, want %v", got, want)
	}
	for it, b := range map[int]int{0: 128, 249: 128, 250: 256, 500: 512, 999: 1024} {
		if got := o.batchSize(it); got != b {
			t.Errorf("batch size at %d: %d, want %d", it, got, b)
		}
	}
	x := smallData(200, 2)
	o.Iterations = 12
	o.Seed = 1
	var seen []Progress
	o.Progress = func(p Progress) { seen = append(seen, p) }
	if _, _, err := FitRQMA(context.Background(), x, smallConfig(), o); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 12 || seen[11].Iteration != 11 || !math.IsNaN(seen[0].ValidationLoss) {
		t.Errorf("progress calls: %d, last %+v", len(seen), seen[len(seen)-1])
	}
}

func TestTrainEarlyStopping(t *testing.T) {
	x := smallData(400, 3)
	o := faTrainOptions()
	o.Seed = 2
	o.StopWindow = 20
	o.ValidateEvery = 5
	o.LearningRate = 0.05 // large: the validation loss soon stalls
	o.Iterations = 2000
	_, rep, err := FitRQMA(context.Background(), x, smallConfig(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.EarlyStopped || rep.Iterations >= 2000 {
		t.Errorf("no early stop: %d iterations", rep.Iterations)
	}
	if len(rep.ValidationLoss) != rep.Iterations/5 {
		t.Errorf("%d validation losses for %d iterations", len(rep.ValidationLoss), rep.Iterations)
	}
}

// TestTrainWeights checks that weights act as frequencies: doubling the
// weight of half the data is equivalent, in distribution, to duplicating it,
// and zero weights exclude samples from the minibatches.
func TestTrainWeights(t *testing.T) {
	x := smallData(100, 4)
	// Put garbage in the zero-weight rows: training must never see it.
	w := make([]float64, len(x))
	for r := range x {
		w[r] = 1
		if r%2 == 1 {
			w[r] = 0
			x[r] = []float64{1e6, -1e6}
		}
	}
	o := DefaultTrainOptions()
	o.Iterations = 20
	o.Weights = w
	o.Seed = 3
	f, rep, err := FitRQMA(context.Background(), x, smallConfig(), o)
	if err != nil {
		t.Fatal(err)
	}
	// The standardisation ignores zero-weight rows too.
	if math.Abs(f.shift[0]) > 1 {
		t.Errorf("shift %v includes zero-weight samples", f.shift)
	}
	for _, l := range rep.Loss {
		if !scalar.Finite(l) || l > 50 {
			t.Fatalf("loss %v: a zero-weight sample reached a minibatch", l)
		}
	}
	o.Weights = w[:10]
	if _, _, err := FitRQMA(context.Background(), x, smallConfig(), o); err == nil {
		t.Error("wrong number of weights accepted")
	}
}

// TestFreeSpans checks that the spans the optimiser visits are exactly the
// unmasked parameters (plus the masked input weights, which maskGrad zeroes).
func TestFreeSpans(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		for _, ctx := range []int{0, 3} {
			s := newStack(n, 3*n, 4, ctx, 2)
			ones := make([]float64, s.numParams())
			for i := range ones {
				ones[i] = 1
			}
			s.maskAll(ones)
			in := make([]bool, len(ones))
			last := -1
			for _, sp := range s.freeSpans(0) {
				if sp[0] <= last || sp[0] >= sp[1] {
					t.Fatalf("n=%d: spans not increasing: %v", n, sp)
				}
				last = sp[1]
				for i := sp[0]; i < sp[1]; i++ {
					in[i] = true
				}
			}
			for l := 0; l < s.layers; l++ {
				for i := l*s.size + s.oW1; i < l*s.size+s.oB1; i++ {
					ones[i] = 1 // input weights are visited whole
				}
			}
			for i := range ones {
				if in[i] != (ones[i] == 1) {
					t.Fatalf("n=%d ctx=%d: parameter %d visited %v, free %v", n, ctx, i, in[i], ones[i] == 1)
				}
			}
		}
	}
}

// faTrainOptions and faRQMAConfig are the factor-analysis presets of the
// paper, which live in models/factor; the tests keep a copy.
func faTrainOptions() TrainOptions {
	o := DefaultTrainOptions()
	o.Decay1 = 0.995
	o.Iterations = 3000
	o.BatchSize = 32
	o.DoubleAt = nil
	o.ValidationFraction = 0.1
	o.ValidateEvery = 25
	o.StopWindow = 100
	return o
}

func faRQMAConfig() RQMAConfig {
	c := PaperRQMAConfig()
	c.SigmoidScale = math.Sqrt(8 / math.Pi)
	return c
}

// TestTrainCancel: cancelling the context from the Progress callback of
// iteration 3 stops FitRQMA and FitConditionalRQMA before iteration 4, with
// an error wrapping context.Canceled and the report of the 4 steps taken.
func TestTrainCancel(t *testing.T) {
	fits := map[string]func(ctx context.Context, o TrainOptions) (*TrainReport, error){
		"RQMA": func(ctx context.Context, o TrainOptions) (*TrainReport, error) {
			_, rep, err := FitRQMA(ctx, smallData(300, 1), smallConfig(), o)
			return rep, err
		},
		"conditional": func(ctx context.Context, o TrainOptions) (*TrainReport, error) {
			x, models := conditionalData(300)
			_, rep, err := FitConditionalRQMA(ctx, testSpec(), x, models, smallConfig(), o)
			return rep, err
		},
	}
	for name, fit := range fits {
		ctx, cancel := context.WithCancel(context.Background())
		last := -1
		o := DefaultTrainOptions()
		o.Iterations = 50
		o.Progress = func(p Progress) {
			last = p.Iteration
			if p.Iteration == 3 {
				cancel()
			}
		}
		rep, err := fit(ctx, o)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want one wrapping context.Canceled", name, err)
		}
		if last != 3 || rep == nil || rep.Iterations != 4 || len(rep.Loss) != 4 {
			t.Errorf("%s: training went on after the cancel: last iteration %d, report %+v", name, last, rep)
		}
	}
	// A context cancelled up front: no step at all.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := DefaultTrainOptions()
	o.Progress = func(p Progress) { t.Errorf("step %d ran under a cancelled context", p.Iteration) }
	if _, _, err := FitRQMA(ctx, smallData(300, 1), smallConfig(), o); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled up front: err = %v", err)
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	if _, _, err := FitRQMA(nil, smallData(300, 1), smallConfig(), o); err == nil || !strings.Contains(err.Error(), "nil context") {
		t.Errorf("nil context: err = %v", err)
	}
}

// TestTrainCache: fits that borrow compiled losses from a TrainCache give
// the same flows, bit for bit, as fits that compile their own, reuse the
// programs of earlier fits of the architecture instead of compiling, and
// may run concurrently.
func TestTrainCache(t *testing.T) {
	o := DefaultTrainOptions()
	o.Iterations = 12
	o.BatchSize = 100 // chunks of 50 rows, padded to 64
	o.DoubleAt = []int{6}
	o.ValidationFraction = 0.2
	o.ValidateEvery = 4
	fit := func(seed uint64, c *TrainCache) []float64 {
		o := o
		o.Seed, o.Cache = seed, c
		f, _, err := FitRQMA(context.Background(), smallData(300, seed), smallConfig(), o)
		if err != nil {
			t.Fatal(err)
		}
		return f.params
	}
	want := [][]float64{fit(1, nil), fit(2, nil)}
	c := NewTrainCache()
	got := fit(1, c)
	held := func() map[*lossProgram]bool {
		m := make(map[*lossProgram]bool)
		for _, ps := range c.idle {
			for _, lp := range ps {
				m[lp] = true
			}
		}
		return m
	}
	first := held()
	if len(first) == 0 {
		t.Fatal("the cache holds nothing after a fit")
	}
	got2 := fit(2, c)
	second := held()
	if len(second) != len(first) {
		t.Errorf("the second fit compiled: %d programs held, %d after the first fit", len(second), len(first))
	}
	for lp := range second {
		if !first[lp] {
			t.Error("the second fit compiled a program")
		}
	}
	var wg sync.WaitGroup
	conc := make([][]float64, 4)
	for i := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conc[i] = fit(uint64(i%2+1), c)
		}()
	}
	wg.Wait()
	for i, p := range append([][]float64{got, got2}, conc...) {
		w := want[i%2]
		for j := range w {
			if p[j] != w[j] {
				t.Fatalf("fit %d with the cache: parameter %d is %v, %v without", i, j, p[j], w[j])
			}
		}
	}
	c.Reset()
	if len(held()) != 0 {
		t.Error("Reset kept programs")
	}
}

// TestTrainCacheConditional: conditional fits borrowing from a TrainCache
// match fits that compile their own.
func TestTrainCacheConditional(t *testing.T) {
	spec := testSpec()
	x, models := conditionalData(200)
	o := ConditionalTrainOptions()
	o.Iterations = 6
	o.BatchSize = 40
	fit := func(seed uint64, c *TrainCache) []float64 {
		o := o
		o.Seed, o.Cache = seed, c
		f, _, err := FitConditionalRQMA(context.Background(), spec, x, models, smallConfig(), o)
		if err != nil {
			t.Fatal(err)
		}
		return f.params
	}
	c := NewTrainCache()
	for _, seed := range []uint64{1, 2} {
		fit(seed, c)
		w, g := fit(seed, nil), fit(seed, c)
		for j := range w {
			if g[j] != w[j] {
				t.Fatalf("seed %d: parameter %d is %v with the cache, %v without", seed, j, g[j], w[j])
			}
		}
	}
}

// conditionalData is rows standard normal draws in three dimensions, the
// rows assigned to models 0, 1, 2 in turn.
func conditionalData(rows int) (x [][]float64, models []int) {
	rng := rand.New(rand.NewPCG(2, 2))
	for r := 0; r < rows; r++ {
		x = append(x, []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()})
		models = append(models, r%3)
	}
	return x, models
}
