package flows

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/checks"
)

func testSpec() ConditionalSpec {
	return ConditionalSpec{
		Contexts: [][]float64{{1, 0, 0}, {1, 1, 0}, {1, 1, 1}},
		Active:   [][]bool{{true, false, false}, {true, true, false}, {true, true, true}},
	}
}

func randomConditional(t *testing.T, cfg RQMAConfig, seed uint64) *ConditionalRQMA {
	t.Helper()
	f, err := NewConditionalRQMA(testSpec(), []float64{1, -1, 0.5}, []float64{0.7, 1.5, 1}, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 9))
	for i := range f.params {
		f.params[i] = f.params[i]*(1+rng.NormFloat64()) + 0.1*rng.NormFloat64()
	}
	f.net.maskAll(f.params[:f.net.numParams()])
	return f
}

func TestConditionalInverseAndLogDet(t *testing.T) {
	cfg := RQMAConfig{Layers: 3, Bins: 8, HiddenPerDim: 4, SigmoidScale: 1}
	f := randomConditional(t, cfg, 1)
	rng := rand.New(rand.NewPCG(2, 3))
	xi, z, back := make([]float64, 3), make([]float64, 3), make([]float64, 3)
	for trial := 0; trial < 30; trial++ {
		k := trial % 3
		for i := range xi {
			xi[i] = rng.NormFloat64() * 1.5
		}
		ldF, err := f.Forward(k, xi, z)
		if err != nil {
			t.Fatal(err)
		}
		ldI, err := f.Inverse(k, z, back)
		if err != nil {
			t.Fatal(err)
		}
		for i := range xi {
			if math.Abs(back[i]-xi[i]) > 1e-9*(1+math.Abs(xi[i])) {
				t.Fatalf("k=%d: inverse(forward(ξ)) = %v, ξ = %v", k, back, xi)
			}
		}
		if math.Abs(ldF+ldI) > 1e-8 {
			t.Fatalf("k=%d: log-dets %v and %v", k, ldF, ldI)
		}
		g := f.Clone()
		want := fdLogDet(t, func(out, in []float64) error { _, err := g.Forward(k, in, out); return err }, xi)
		if math.Abs(ldF-want) > 1e-5*(1+math.Abs(want)) {
			t.Fatalf("k=%d: log|det J| = %v, finite differences %v", k, ldF, want)
		}
	}
	// Different models give different maps.
	a, b := make([]float64, 3), make([]float64, 3)
	f.Forward(0, xi, a)
	f.Forward(2, xi, b)
	if a[0] == b[0] {
		t.Error("context has no effect")
	}
	if _, err := f.Forward(3, xi, a); err == nil {
		t.Error("model out of range accepted")
	}
	if n := testing.AllocsPerRun(10, func() { f.Forward(1, xi, z); f.Inverse(1, z, back) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
	// The paper's width in dimension 8 (256 hidden units), where a matrix
	// product with the context would spread over goroutines and allocate.
	const n8 = 8
	spec := ConditionalSpec{Active: [][]bool{make([]bool, n8), make([]bool, n8)}, Contexts: [][]float64{{1, 0}, {0, 1}}}
	for i := range n8 {
		spec.Active[0][i] = i < 4
		spec.Active[1][i] = true
	}
	ones := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	w, err := NewConditionalRQMA(spec, make([]float64, n8), ones, PaperRQMAConfig(), 2)
	if err != nil {
		t.Fatal(err)
	}
	x8, z8, b8 := make([]float64, n8), make([]float64, n8), make([]float64, n8)
	if n := testing.AllocsPerRun(10, func() { w.Forward(0, x8, z8); w.Forward(1, x8, z8); w.Inverse(1, z8, b8) }); n != 0 {
		t.Errorf("paper configuration: %v allocations", n)
	}
}

func TestConditionalGradient(t *testing.T) {
	if raceDetector && testing.Short() {
		// Finite differences of one compiled loss, single-threaded: the
		// pass without -race runs it; the training tests cover the
		// flows' concurrency.
		t.Skip("skipped with -race -short (run without -race)")
	}
	cfg := RQMAConfig{Layers: 2, Bins: 4, HiddenPerDim: 2, SigmoidScale: 1.2}
	f := randomConditional(t, cfg, 5)
	rng := rand.New(rand.NewPCG(4, 4))
	x := make([][]float64, 8)
	models := make([]int, len(x))
	for r := range x {
		x[r] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		models[r] = r % 3
	}
	np := f.net.numParams()
	l := newGraphLearner(&condBatch{f: f, x: x, models: models}, f.params, append(f.net.freeSpans(0), [2]int{np, len(f.params)}))
	// With the auxiliary draws fixed by the seed, the batch loss equals the
	// single-point loss at the drawn values; here model 2 has no auxiliary
	// coordinates, so compare on its rows.
	want := 0.0
	idx := []int{2, 5}
	for _, j := range idx {
		lq, err := f.LogDensity(2, x[j])
		if err != nil {
			t.Fatal(err)
		}
		want -= lq
	}
	if got := batchLoss(l, f.params, idx, 0, nil); math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Fatalf("batch loss %v, single-point loss %v", got, want)
	}
	checkGradient(t, l, func(v []float64) { f.net.maskAll(v[:f.net.numParams()]) }, len(x))
}

// TestFitConditional trains on exact draws of three normal models and
// checks each model's held-out log-likelihood (aux coordinates included)
// against the exact density of the augmented target.
func TestFitConditional(t *testing.T) {
	spec := testSpec()
	rng := rand.New(rand.NewPCG(8, 8))
	// Model k: active coordinates are independent N(m_i, s_i²) with
	// model-specific parameters; auxiliary ones are N(0, 1).
	means := [][]float64{{3, 0, 0}, {-1, 2, 0}, {0, 1, -2}}
	sds := [][]float64{{0.5, 1, 1}, {1, 0.3, 1}, {2, 1, 0.4}}
	draw := func(k int) []float64 {
		v := make([]float64, 3)
		for i := range v {
			if spec.Active[k][i] {
				v[i] = means[k][i] + sds[k][i]*rng.NormFloat64()
			} else {
				v[i] = rng.NormFloat64()
			}
		}
		return v
	}
	per := checks.Size(3000, 1000)
	var x [][]float64
	var models []int
	for k := 0; k < 3; k++ {
		for r := 0; r < per; r++ {
			x = append(x, draw(k))
			models = append(models, k)
		}
	}
	opts := ConditionalTrainOptions()
	opts.Iterations = 600
	opts.Seed = 3
	cfg := PaperRQMAConfig()
	cfg.HiddenPerDim = 8 // these targets are easy; keeps the test fast
	f, rep, err := FitConditionalRQMA(context.Background(), spec, x, models, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d iterations in %v (early stop %v)", rep.Iterations, rep.Elapsed, rep.EarlyStopped)
	for k := 0; k < 3; k++ {
		d := make([]float64, 2000)
		for r := range d {
			v := draw(k)
			lq, err := f.LogDensity(k, v)
			if err != nil {
				t.Fatal(err)
			}
			exact := 0.0
			for i := range v {
				m, s := 0.0, 1.0
				if spec.Active[k][i] {
					m, s = means[k][i], sds[k][i]
				}
				e := (v[i] - m) / s
				exact += -0.5*e*e - math.Log(s) - halfLog2Pi
			}
			d[r] = exact - lq
		}
		gap, sd := stat.MeanStdDev(d, nil)
		q, err := AssessConditional(f, k, nil, nil, func(th []float64) (float64, error) {
			l, j := 0.0, 0
			for i := range spec.Active[k] {
				if spec.Active[k][i] {
					e := (th[j] - means[k][i]) / sds[k][i]
					l += -0.5*e*e - math.Log(sds[k][i]) - halfLog2Pi
					j++
				}
			}
			return l, nil
		}, 2000, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("model %d: held-out KL estimate %.4f ± %.4f, IS ESS %.0f/%d", k, gap, sd/math.Sqrt(float64(len(d))), q.ESS, q.Draws)
		if q.ESSFraction < 0.8 {
			t.Errorf("model %d: importance-sampling ESS fraction %.3f < 0.8", k, q.ESSFraction)
		}
		if gap > 0.05 {
			t.Errorf("model %d: held-out log-likelihood %.4f nats below exact", k, gap)
		}
	}
}

func TestConditionalBadInput(t *testing.T) {
	spec := testSpec()
	x := [][]float64{{1, 2, 3}, {2, 1, 0}, {0, 1, 1}, {1, 1, 2}}
	opts := ConditionalTrainOptions()
	cases := map[string]func() error{
		"labels": func() error {
			_, _, err := FitConditionalRQMA(context.Background(), spec, x, []int{0, 1}, PaperRQMAConfig(), opts)
			return err
		},
		"range": func() error {
			_, _, err := FitConditionalRQMA(context.Background(), spec, x, []int{0, 1, 2, 3}, PaperRQMAConfig(), opts)
			return err
		},
		"rows": func() error {
			_, _, err := FitConditionalRQMA(context.Background(), spec, [][]float64{{1, 2}, {3, 4}}, []int{0, 1}, PaperRQMAConfig(), opts)
			return err
		},
		"spec": func() error {
			bad := ConditionalSpec{Contexts: spec.Contexts, Active: spec.Active[:2]}
			_, _, err := FitConditionalRQMA(context.Background(), bad, x, []int{0, 1, 2, 0}, PaperRQMAConfig(), opts)
			return err
		},
		"ragged spec": func() error {
			bad := testSpec()
			bad.Contexts[1] = []float64{1}
			_, err := NewConditionalRQMA(bad, []float64{0, 0, 0}, []float64{1, 1, 1}, PaperRQMAConfig(), 1)
			return err
		},
	}
	for name, f := range cases {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
