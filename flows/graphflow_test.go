package flows_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/sas"
)

// forwardOnly is coupling without its inverse graph, so that GraphFlow
// inverts it numerically.
type forwardOnly struct{ c coupling }

func (f forwardOnly) Dim() int                         { return f.c.Dim() }
func (f forwardOnly) NumParams() int                   { return f.c.NumParams() }
func (f forwardOnly) Init(p []float64, rng *rand.Rand) { f.c.Init(p, rng) }
func (f forwardOnly) Forward(x *gorgonia.Node, p *flows.Params) (*gorgonia.Node, *gorgonia.Node, error) {
	return f.c.Forward(x, p)
}

func fitCoupling(t *testing.T, b flows.Builder, x [][]float64, iters int, seed uint64) *flows.GraphFlow {
	t.Helper()
	opts := flows.DefaultTrainOptions()
	opts.Iterations = iters
	opts.Seed = seed
	f, _, err := flows.FitGraph(context.Background(), b, x, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// logAbsDetFD is log|det J| of f.Forward at θ by central differences.
func logAbsDetFD(t *testing.T, f *flows.GraphFlow, theta []float64) float64 {
	n := len(theta)
	j := mat.NewDense(n, n, nil)
	zp, zm := make([]float64, n), make([]float64, n)
	for c := 0; c < n; c++ {
		tp := append([]float64(nil), theta...)
		tm := append([]float64(nil), theta...)
		const h = 1e-6
		tp[c] += h
		tm[c] -= h
		if _, err := f.Forward(tp, zp); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Forward(tm, zm); err != nil {
			t.Fatal(err)
		}
		for r := 0; r < n; r++ {
			j.Set(r, c, (zp[r]-zm[r])/(2*h))
		}
	}
	var lu mat.LU
	lu.Factorize(j)
	ld, _ := lu.LogDet()
	return ld
}

// TestGraphFlowMaps checks a trained user-written flow: Inverse∘Forward is
// the identity, through the inverse graph and through the numeric solve;
// Forward's log-determinant matches the finite-difference Jacobian and
// Inverse's is its negative; neither allocates.
func TestGraphFlowMaps(t *testing.T) {
	x := banana(rand.New(rand.NewPCG(3, 3)), 1000)
	c := coupling{n: 2, layers: 4, hidden: 8}
	withInv := fitCoupling(t, c, x, 100, 1)
	shift, scale := withInv.Standardisation()
	numeric, err := flows.NewGraphFlow(forwardOnly{c}, withInv.Params(), shift, scale)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	z, back := make([]float64, 2), make([]float64, 2)
	for trial := 0; trial < 20; trial++ {
		theta := x[rng.IntN(len(x))]
		ld, err := withInv.Forward(theta, z)
		if err != nil {
			t.Fatal(err)
		}
		if fd := logAbsDetFD(t, withInv, theta); math.Abs(fd-ld) > 1e-6 {
			t.Errorf("θ=%v: log|det J| = %v, finite differences %v", theta, ld, fd)
		}
		for _, f := range []*flows.GraphFlow{withInv, numeric} {
			ldInv, err := f.Inverse(z, back)
			if err != nil {
				t.Fatal(err)
			}
			for i := range theta {
				if math.Abs(back[i]-theta[i]) > 1e-9*(1+math.Abs(theta[i])) {
					t.Errorf("θ=%v: Inverse(Forward(θ)) = %v", theta, back)
				}
			}
			if math.Abs(ldInv+ld) > 1e-8 {
				t.Errorf("θ=%v: inverse log-determinant %v, forward %v", theta, ldInv, ld)
			}
		}
	}
	theta := x[0]
	for _, f := range []*flows.GraphFlow{withInv, numeric} {
		if n := testing.AllocsPerRun(20, func() { f.Forward(theta, z); f.Inverse(z, back) }); n != 0 {
			t.Errorf("%v allocations per Forward and Inverse", n)
		}
	}
	// A clone gives the same values from its own scratch space.
	g := withInv.Clone()
	z2 := make([]float64, 2)
	ld1, _ := withInv.Forward(theta, z)
	ld2, _ := g.Forward(theta, z2)
	if ld1 != ld2 || z[0] != z2[0] || z[1] != z2[1] {
		t.Errorf("clone: %v, %v; original %v, %v", z2, ld2, z, ld1)
	}
}

func TestGraphFlowSaveLoad(t *testing.T) {
	x := banana(rand.New(rand.NewPCG(5, 5)), 500)
	c := coupling{n: 2, layers: 2, hidden: 4}
	f := fitCoupling(t, c, x, 20, 2)
	var buf bytes.Buffer
	if err := flows.Save(&buf, f); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	g, err := flows.LoadGraph(bytes.NewReader(data), c)
	if err != nil {
		t.Fatal(err)
	}
	z1, z2 := make([]float64, 2), make([]float64, 2)
	ld1, _ := f.Forward(x[1], z1)
	ld2, _ := g.Forward(x[1], z2)
	if ld1 != ld2 || z1[0] != z2[0] || z1[1] != z2[1] {
		t.Errorf("loaded flow gives %v, %v; saved %v, %v", z2, ld2, z1, ld1)
	}
	if _, err := flows.LoadGraph(bytes.NewReader(data), coupling{n: 2, layers: 3, hidden: 4}); err == nil {
		t.Error("loading into a Builder with another parameter count succeeded")
	}
	if _, err := flows.Load(bytes.NewReader(data)); err == nil {
		t.Error("Load of a user-written flow without its Builder succeeded")
	}
}

// badBuilder takes fewer parameters than it declares.
type badBuilder struct{ coupling }

func (b badBuilder) NumParams() int { return b.coupling.NumParams() + 1 }

func TestFitGraphErrors(t *testing.T) {
	x := banana(rand.New(rand.NewPCG(6, 6)), 100)
	opts := flows.DefaultTrainOptions()
	opts.Iterations = 2
	if _, _, err := flows.FitGraph(context.Background(), badBuilder{coupling{n: 2, layers: 1, hidden: 2}}, x, opts); err == nil {
		t.Error("a Builder that leaves parameters unused was accepted")
	}
	if _, _, err := flows.FitGraph(context.Background(), coupling{n: 3, layers: 1, hidden: 2}, x, opts); err == nil {
		t.Error("a Builder of the wrong dimension was accepted")
	}
	if _, _, err := flows.FitGraph(context.Background(), nil, x, opts); err == nil {
		t.Error("a nil Builder was accepted")
	}
}

// TestGraphFlowTRJ runs TRJ on the paper's sinh-arcsinh target (§4.2) with
// user-written coupling flows as the transports and checks the estimate of
// π(k=2) = 0.75 against 4 Monte Carlo standard errors (from independent
// chains).
func TestGraphFlowTRJ(t *testing.T) {
	target := sas.Paper()
	rng := rand.New(rand.NewPCG(7, 7))
	pilot, err := target.ExactDraws(rng, 4000)
	if err != nil {
		t.Fatal(err)
	}
	var trs []kernels.Transport
	var cov []mat.Symmetric
	for k, d := range pilot {
		n := target.ModelDim(k)
		f := fitCoupling(t, coupling{n: n, layers: 4, hidden: 8}, d, 300, uint64(10+k))
		trs = append(trs, f)
		m := mat.NewDense(len(d), n, nil)
		for i, row := range d {
			m.SetRow(i, row)
		}
		var c mat.SymDense
		stat.CovarianceMatrix(&c, m, nil)
		c.ScaleSym(2.38*2.38/float64(n), &c)
		cov = append(cov, &c)
	}
	chains, steps := 8, 4000
	if testing.Short() {
		steps = 2000
	}
	means := make([]float64, chains)
	for ch := range means {
		tg := target.Clone()
		own := make([]kernels.Transport, len(trs))
		for k, tr := range trs {
			own[k] = tr.(*flows.GraphFlow).Clone()
		}
		within, err := kernels.NewModelRandomWalk(tg, cov)
		if err != nil {
			t.Fatal(err)
		}
		jump := [][]float64{{0.25, 0.75}, {0.25, 0.75}}
		trj, err := kernels.NewTRJ(kernels.TRJConfig{Target: tg, Transports: own, Jump: jump, Within: within, Alternate: true})
		if err != nil {
			t.Fatal(err)
		}
		crng := rand.New(rand.NewPCG(99, uint64(ch)))
		s, err := trj.Init(1, pilot[1][ch])
		if err != nil {
			t.Fatal(err)
		}
		in2 := 0
		for i := 0; i < steps; i++ {
			s, _ = trj.Step(crng, s)
			if s.Model == 1 {
				in2++
			}
		}
		means[ch] = float64(in2) / float64(steps)
	}
	m, sd := stat.MeanStdDev(means, nil)
	se := sd / math.Sqrt(float64(chains))
	if math.Abs(m-0.75) > 4*se {
		t.Errorf("π(2) = %.4f ± %.4f, want 0.75 within 4 MCSE", m, se)
	}
	t.Logf("π(2) = %.4f ± %.4f over %d chains of %d steps", m, se, chains, steps)
}

// TestFitGraphCancel: FitGraph stops at the cancel from iteration 3's
// Progress callback.
func TestFitGraphCancel(t *testing.T) {
	x := banana(rand.New(rand.NewPCG(6, 6)), 200)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	last := -1
	opts := flows.DefaultTrainOptions()
	opts.Iterations = 50
	opts.Progress = func(p flows.Progress) {
		last = p.Iteration
		if p.Iteration == 3 {
			cancel()
		}
	}
	_, rep, err := flows.FitGraph(ctx, coupling{n: 2, layers: 1, hidden: 2}, x, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one wrapping context.Canceled", err)
	}
	if last != 3 || rep.Iterations != 4 {
		t.Errorf("training went on after the cancel: last iteration %d, %d steps", last, rep.Iterations)
	}
}
