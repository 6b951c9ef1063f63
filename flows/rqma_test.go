package flows

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/internal/checks"
)

// fdLogDet is log|det| of the central-difference Jacobian of f at x.
func fdLogDet(t *testing.T, f func(out, in []float64) error, x []float64) float64 {
	t.Helper()
	n := len(x)
	jac := mat.NewDense(n, n, nil)
	var ferr error
	fd.Jacobian(jac, func(y, x []float64) {
		if err := f(y, x); err != nil {
			ferr = err
		}
	}, x, &fd.JacobianSettings{Formula: fd.Central, Step: 1e-6})
	if ferr != nil {
		t.Fatal(ferr)
	}
	var lu mat.LU
	lu.Factorize(jac)
	ld, _ := lu.LogDet()
	return ld
}

// randomRQMA is an untrained flow whose layers are far from the identity:
// the default initialisation is perturbed so every spline is curved.
func randomRQMA(t *testing.T, n int, cfg RQMAConfig, seed uint64) *RQMA {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	shift := make([]float64, n)
	scale := make([]float64, n)
	for i := range shift {
		shift[i] = rng.NormFloat64()
		scale[i] = 0.5 + rng.Float64()
	}
	f, err := NewRQMA(shift, scale, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.params {
		f.params[i] *= 1 + rng.NormFloat64()
	}
	f.net.maskAll(f.params) // keep masked weights at zero
	return f
}

func TestRQMAInverseAndLogDet(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		for _, c := range []float64{1, math.Sqrt(8 / math.Pi)} {
			cfg := RQMAConfig{Layers: 3, Bins: 10, HiddenPerDim: 4, SigmoidScale: c}
			f := randomRQMA(t, n, cfg, uint64(n))
			rng := rand.New(rand.NewPCG(7, uint64(n)))
			theta, z, back := make([]float64, n), make([]float64, n), make([]float64, n)
			for trial := 0; trial < 20; trial++ {
				for i := range theta {
					theta[i] = f.shift[i] + 2*rng.NormFloat64()/f.scale[i]
				}
				ldF, ldI := checks.RoundTrip(t, f, theta, z, back)
				for i := range theta {
					if math.Abs(back[i]-theta[i]) > 1e-9*(1+math.Abs(theta[i])) {
						t.Fatalf("n=%d: inverse(forward(θ))[%d] = %v, θ = %v", n, i, back[i], theta[i])
					}
				}
				if math.Abs(ldF+ldI) > 1e-8 {
					t.Fatalf("n=%d: forward log-det %v, inverse log-det %v", n, ldF, ldI)
				}
				want := fdLogDet(t, func(out, in []float64) error { _, err := f.Clone().Forward(in, out); return err }, theta)
				if math.Abs(ldF-want) > 1e-5*(1+math.Abs(want)) {
					t.Fatalf("n=%d: log|det J| = %v, finite differences %v", n, ldF, want)
				}
			}
		}
	}
}

func TestRQMAAutoregressive(t *testing.T) {
	// A single layer's output i must not depend on inputs ≥ i (after the
	// permutation): checked through the Jacobian of a one-layer flow, whose
	// standardisation and sigmoids act elementwise and so keep the pattern.
	cfg := RQMAConfig{Layers: 1, Bins: 5, HiddenPerDim: 3}
	f := randomRQMA(t, 4, cfg, 3)
	theta := []float64{-1.2, 0.1, 0.8, -0.3}
	jac := mat.NewDense(4, 4, nil)
	fd.Jacobian(jac, func(z, th []float64) {
		if _, err := f.Forward(th, z); err != nil {
			t.Fatal(err)
		}
	}, theta, nil)
	// Layer input is reversed: output j depends on input positions whose
	// reversed index ≤ j's, so d z_j / d θ_i = 0 when 3−i > j.
	for j := 0; j < 4; j++ {
		for i := 0; i < 4; i++ {
			if 3-i > j && jac.At(j, i) != 0 {
				t.Errorf("∂y%d/∂u%d = %v, want 0", j, i, jac.At(j, i))
			}
		}
	}
}

// batchLoss evaluates the learner's summed loss over rows idx.
func batchLoss(l learner, p []float64, idx []int, seed uint64, g []float64) float64 {
	w := l.newWorker()
	v, err := w.batch(p, idx, nil, rand.New(rand.NewPCG(seed, 2)), g)
	if err != nil {
		panic(err)
	}
	return v
}

// checkGradient compares the analytic minibatch gradient with central
// differences for every unmasked parameter.
func checkGradient(t *testing.T, l learner, mask func([]float64), rows int) {
	// mask zeroes every masked weight; their gradient must be zero.
	t.Helper()
	p := l.params()
	idx := make([]int, rows)
	for i := range idx {
		idx[i] = i
	}
	g := make([]float64, len(p))
	batchLoss(l, p, idx, 5, g)
	free := make([]float64, len(p))
	for i := range free {
		free[i] = 1
	}
	mask(free)
	checked, bad := 0, 0
	for i := range p {
		if free[i] == 0 {
			if g[i] != 0 {
				t.Errorf("masked parameter %d has gradient %v", i, g[i])
			}
			continue
		}
		checked++
		orig := p[i]
		want := fd.Derivative(func(v float64) float64 {
			p[i] = v
			return batchLoss(l, p, idx, 5, nil)
		}, orig, &fd.Settings{Formula: fd.Central, Step: 1e-5})
		p[i] = orig
		if math.Abs(g[i]-want) > 1e-5*(1+math.Abs(want)) {
			if bad++; bad <= 10 {
				t.Errorf("parameter %d: gradient %v, finite difference %v", i, g[i], want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d parameters have wrong gradients", bad, checked)
	}
	t.Logf("checked %d parameters", checked)
}

func TestRQMAGradient(t *testing.T) {
	if raceDetector && testing.Short() {
		// Finite differences of one compiled loss, single-threaded: the
		// pass without -race runs it; the training tests cover the
		// flows' concurrency.
		t.Skip("skipped with -race -short (run without -race)")
	}
	// n = 1 takes the shared-conditioner shortcut; n = 3 the general path.
	for _, n := range []int{1, 3} {
		cfg := RQMAConfig{Layers: 2, Bins: 4, HiddenPerDim: 3, SigmoidScale: 1.3}
		f := randomRQMA(t, n, cfg, 4)
		rng := rand.New(rand.NewPCG(1, 1))
		x := make([][]float64, 9)
		for r := range x {
			x[r] = make([]float64, n)
			for i := range x[r] {
				x[r][i] = rng.NormFloat64()
			}
		}
		l := newGraphLearner(&rqmaBatch{f: f, x: x}, f.params, f.net.freeSpans(0))
		// The summed loss must equal −Σ log q from the single-point path.
		want := 0.0
		for _, row := range x {
			lq, err := f.LogDensity(row)
			if err != nil {
				t.Fatal(err)
			}
			want -= lq
		}
		idx := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
		if got := batchLoss(l, f.params, idx, 0, nil); math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Fatalf("n=%d: batch loss %v, single-point loss %v", n, got, want)
		}
		checkGradient(t, l, f.net.maskAll, len(x))
	}
}

func TestRQMANoAllocs(t *testing.T) {
	f := randomRQMA(t, 3, PaperRQMAConfig(), 9)
	theta, z := []float64{0.1, -0.3, 1}, make([]float64, 3)
	n := testing.AllocsPerRun(20, func() {
		f.Forward(theta, z)
		f.Inverse(z, theta)
	})
	if n != 0 {
		t.Errorf("%v allocations per Forward+Inverse", n)
	}
}

func TestRQMABadInput(t *testing.T) {
	f := randomRQMA(t, 2, PaperRQMAConfig(), 1)
	if _, err := f.Forward([]float64{1}, make([]float64, 2)); err == nil {
		t.Error("Forward accepted a short θ")
	}
	if _, err := f.Inverse([]float64{1, 2}, make([]float64, 3)); err == nil {
		t.Error("Inverse accepted a long θ")
	}
	if _, err := f.Forward([]float64{math.NaN(), 0}, make([]float64, 2)); err == nil {
		t.Error("Forward accepted NaN")
	}
	if _, err := NewRQMA([]float64{0}, []float64{0}, PaperRQMAConfig(), 1); err == nil {
		t.Error("NewRQMA accepted a zero scale")
	}
	if _, _, err := FitRQMA(context.Background(), [][]float64{{1}, {1}, {1}}, PaperRQMAConfig(), DefaultTrainOptions()); err == nil {
		t.Error("FitRQMA accepted constant data")
	}
	if _, _, err := FitRQMA(context.Background(), [][]float64{{1}, {2, 3}}, PaperRQMAConfig(), DefaultTrainOptions()); err == nil {
		t.Error("FitRQMA accepted ragged data")
	}
	if _, _, err := FitRQMA(context.Background(), [][]float64{{1}, {2}}, PaperRQMAConfig(), TrainOptions{Iterations: -1}); err == nil {
		t.Error("FitRQMA accepted -1 iterations")
	}
}

// TestZeroTrainOptions checks that zero fields take DefaultTrainOptions'
// values: zero options with DoubleAt set train exactly as the defaults.
func TestZeroTrainOptions(t *testing.T) {
	x := [][]float64{{1}, {2}, {0.5}, {3}, {1.5}, {2.5}}
	cfg := RQMAConfig{Layers: 1, Bins: 3, HiddenPerDim: 2}
	d := DefaultTrainOptions()
	d.Iterations = 5
	_, r1, err := FitRQMA(context.Background(), x, cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	_, r2, err := FitRQMA(context.Background(), x, cfg, TrainOptions{Iterations: 5, DoubleAt: d.DoubleAt})
	if err != nil {
		t.Fatal(err)
	}
	for i := range r1.Loss {
		if r1.Loss[i] != r2.Loss[i] {
			t.Fatalf("iteration %d: loss %v with zero options, %v with the defaults", i, r2.Loss[i], r1.Loss[i])
		}
	}
	if _, _, err := FitRQMA(context.Background(), x, cfg, TrainOptions{}); err != nil {
		t.Errorf("zero options: %v", err)
	}
}

// TestClonesShareParameters checks that clones of every flow type evaluate
// alike from several goroutines at once (run with -race).
func TestClonesShareParameters(t *testing.T) {
	f := randomRQMA(t, 3, RQMAConfig{Layers: 2, Bins: 4, HiddenPerDim: 3}, 11)
	a, err := NewAffine([]float64{1, 2, 3}, mat.NewSymDense(3, []float64{2, 0.5, 0, 0.5, 1, 0, 0, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	theta := []float64{0.3, -0.2, 1.1}
	type fw interface {
		Forward(theta, z []float64) (float64, error)
	}
	for _, mk := range []func() fw{func() fw { return f.Clone() }, func() fw { return a.Clone() }} {
		want := make([]float64, 3)
		wld, _ := mk().Forward(theta, want)
		var wg sync.WaitGroup
		errs := make([]string, 4)
		for g := 0; g < 4; g++ {
			c := mk()
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				z := make([]float64, 3)
				for i := 0; i < 50; i++ {
					ld, err := c.Forward(theta, z)
					if err != nil || ld != wld || z[0] != want[0] || z[2] != want[2] {
						errs[g] = "clone disagrees"
					}
				}
			}(g)
		}
		wg.Wait()
		for _, e := range errs {
			if e != "" {
				t.Error(e)
			}
		}
	}
}

// TestRQMALazyPrograms: a flow compiles its maps on first use; goroutines
// cloning a never-evaluated flow while it makes its first evaluation all
// get the same values (run with -race).
func TestRQMALazyPrograms(t *testing.T) {
	cfg := RQMAConfig{Layers: 2, Bins: 5, HiddenPerDim: 4, SigmoidScale: 1}
	f := randomRQMA(t, 3, cfg, 7)
	if f.fwd != nil || f.progs.fwd != nil {
		t.Fatal("NewRQMA compiled the maps")
	}
	theta := []float64{0.3, -1, 2}
	want := make([]float64, 3)
	ref := f.Clone()
	ldWant, err := ref.Forward(theta, want)
	if err != nil {
		t.Fatal(err)
	}
	g := randomRQMA(t, 3, cfg, 7) // the same flow, never evaluated
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := g
			if i > 0 {
				h = g.Clone()
			}
			z, back := make([]float64, 3), make([]float64, 3)
			ld, err := h.Forward(theta, z)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := h.Inverse(z, back); err != nil {
				t.Error(err)
				return
			}
			for j := range z {
				if z[j] != want[j] || ld != ldWant || math.Abs(back[j]-theta[j]) > 1e-9 {
					t.Errorf("goroutine %d: z %v ld %v θ %v, want %v %v %v", i, z, ld, back, want, ldWant, theta)
					return
				}
			}
		}()
	}
	wg.Wait()
}
