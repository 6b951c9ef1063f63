package ppl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/internal/checks"
)

// maskedTestData is a small regression: n rows of p predictors.
func maskedTestData(n, p int) (x [][]float64, y []float64) {
	rng := rand.New(rand.NewPCG(4, 5))
	x = make([][]float64, p)
	for j := range x {
		x[j] = make([]float64, n)
		for i := range x[j] {
			x[j][i] = rng.NormFloat64()
		}
	}
	y = make([]float64, n)
	for i := range y {
		y[i] = 0.5 + x[0][i] - 0.7*x[2%p][i] + rng.NormFloat64()
	}
	return x, y
}

// maskedTestSpaces returns one hierarchical regression as a per-model and
// as a masked selection space: always-in a (real) and tau (positive),
// then the coefficients beta_j ~ N(0, tau), then the shared noise scale s,
// with y ~ N(a + X beta, s) and a reported quantity.
func maskedTestSpaces(t *testing.T, n, p int) (single, masked *SelectionSpace) {
	t.Helper()
	x, y := maskedTestData(n, p)
	cols := func(idx []int) []float64 { // n×len(idx), row-major
		v := make([]float64, 0, n*len(idx))
		for i := range n {
			for _, j := range idx {
				v = append(v, x[j][i])
			}
		}
		return v
	}
	all := make([]int, p)
	for j := range all {
		all[j] = j
	}
	likelihood := func(b *Builder, a, s, mean *gorgonia.Node) {
		mu := b.Check(gorgonia.Add(mean, a))
		b.Sample(Normal{Mu: mu, Sigma: s}, b.Data("y", y))
	}
	build := func(b *Builder, tm Terms) error {
		a := b.Real("a")
		tau := b.Positive("tau")
		b.Sample(Normal{Mu: 0.0, Sigma: 2.0}, a)
		b.Sample(Gamma{Shape: 2.0, Rate: 2.0}, tau)
		idx := tm.Indices()
		var beta *gorgonia.Node
		if len(idx) > 0 {
			beta = b.Real("beta", len(idx))
		}
		s := b.Positive("s")
		b.Sample(Gamma{Shape: 2.0, Rate: 1.0}, s)
		mean := b.Data("zero", make([]float64, n))
		if beta != nil {
			b.Sample(Normal{Mu: 0.0, Sigma: tau}, beta)
			mean = b.Check(gorgonia.Mul(b.Data("X", cols(idx), n, len(idx)), beta))
		}
		likelihood(b, a, s, mean)
		return nil
	}
	mbuild := func(b *Builder, mask *gorgonia.Node) error {
		a := b.Real("a")
		tau := b.Positive("tau")
		b.Sample(Normal{Mu: 0.0, Sigma: 2.0}, a)
		b.Sample(Gamma{Shape: 2.0, Rate: 2.0}, tau)
		beta := b.Real("beta", p)
		s := b.Positive("s")
		b.Sample(Gamma{Shape: 2.0, Rate: 1.0}, s)
		lp := b.Check(Normal{Mu: 0.0, Sigma: tau}.LogProbs(beta))
		b.AddLogDensity(b.Check(gorgonia.HadamardProd(lp, mask)))
		bm := b.Check(gorgonia.HadamardProd(beta, mask))
		b.Report("size", b.Check(gorgonia.Sum(mask)))
		likelihood(b, a, s, b.Check(gorgonia.Mul(b.Data("X", cols(all), n, p), bm)))
		return nil
	}
	var err error
	if single, err = NewSelectionSpace(p, build, WithSelectionShared(1)); err != nil {
		t.Fatal(err)
	}
	if masked, err = NewMaskedSelectionSpace(p, mbuild, WithSelectionShared(1), WithModelCache(8)); err != nil {
		t.Fatal(err)
	}
	return single, masked
}

// TestMaskedSelectionMatchesPerModel checks that a masked space's models
// have the log-density and gradient of the same models built on their
// own, that their gradients match finite differences, and that Constrain
// and Unconstrain are inverse.
func TestMaskedSelectionMatchesPerModel(t *testing.T) {
	n, p := 25, 7
	single, masked := maskedTestSpaces(t, n, p)
	if masked.Always() != 2 || masked.Shared() != 1 || masked.P() != p || single.Always() != 2 {
		t.Fatalf("layout: always %d (per model %d), shared %d, p %d", masked.Always(), single.Always(), masked.Shared(), masked.P())
	}
	rng := rand.New(rand.NewPCG(6, 7))
	for _, idx := range [][]int{{}, {0}, {6}, {1, 3}, {0, 2, 4, 5}, {0, 1, 2, 3, 4, 5, 6}} {
		tm, _ := NewTerms(p, idx...)
		ms, err := single.Model(tm)
		if err != nil {
			t.Fatal(err)
		}
		mm, err := masked.Model(tm)
		if err != nil {
			t.Fatal(err)
		}
		if mm.Dim() != ms.Dim() || mm.Dim() != masked.Dim(tm) {
			t.Fatalf("%v: dimension %d, per model %d, space %d", tm, mm.Dim(), ms.Dim(), masked.Dim(tm))
		}
		d := mm.Dim()
		gm := make([]float64, d)
		for k := 0; k < 3; k++ {
			u := make([]float64, d)
			for i := range u {
				u[i] = 0.8 * rng.NormFloat64()
			}
			checks.SameDensity(t, fmt.Sprintf("%v: masked against per model", tm), mm.LogDensityGrad, ms.LogDensityGrad, u, gm, 1e-10)
			checkGradient(t, mm, u, 1e-5)

			// Constrain gives the parameters named by the saturated
			// model's names, then the report; Unconstrain inverts it.
			names := mm.ParamNames()
			if len(names) != d+1 || names[0] != "a" || names[1] != "tau" || names[d-1] != "s" || names[d] != "size" {
				t.Fatalf("%v: names %v", tm, names)
			}
			for j, i := range idx {
				if want := "beta." + string(rune('1'+i)); names[2+j] != want {
					t.Errorf("%v: name %d is %q, want %q", tm, 2+j, names[2+j], want)
				}
			}
			c := make([]float64, len(names))
			if err := mm.Constrain(u, c); err != nil {
				t.Fatal(err)
			}
			if c[d] != float64(len(idx)) || !near(c[1], math.Exp(u[1]), 1e-14) {
				t.Errorf("%v: constrained %v at %v", tm, c, u)
			}
			back := make([]float64, d)
			if err := mm.Unconstrain(c[:mm.NumConstrained()], back); err != nil {
				t.Fatal(err)
			}
			for i := range back {
				if !near(back[i], u[i], 1e-12) {
					t.Errorf("%v: Unconstrain(Constrain(u))[%d] = %v, want %v", tm, i, back[i], u[i])
				}
			}
		}
		if _, err := mm.Tempered(); err == nil {
			t.Errorf("%v: a masked model has no tempered form, but Tempered gave no error", tm)
		}
		if err := mm.UnconstrainNamed(map[string][]float64{"a": {0}}, make([]float64, d)); err == nil {
			t.Errorf("%v: UnconstrainNamed gave no error", tm)
		}
	}
}

// TestMaskedSelectionConcurrent evaluates clones of masked models on
// several goroutines at once (run with -race): each must get the values of
// a lone evaluation.
func TestMaskedSelectionConcurrent(t *testing.T) {
	_, masked := maskedTestSpaces(t, 20, 5)
	type job struct {
		m    Model
		u    []float64
		want float64
	}
	var jobs []job
	for k, idx := range [][]int{{}, {1}, {0, 4}, {0, 1, 2, 3, 4}} {
		tm, _ := NewTerms(5, idx...)
		m, err := masked.Build(tm)
		if err != nil {
			t.Fatal(err)
		}
		u := make([]float64, m.Dim())
		for i := range u {
			u[i] = 0.1 * float64(i+k)
		}
		want, err := m.LogDensity(u)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job{m, u, want})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 50 {
				j := jobs[(g+r)%len(jobs)]
				m := j.m.Clone()
				grad := make([]float64, m.Dim())
				if v, err := m.LogDensityGrad(j.u, grad); err != nil || v != j.want {
					errs <- "concurrent evaluation differs"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestMaskedSelectionBadInput(t *testing.T) {
	ok := func(b *Builder, mask *gorgonia.Node) error {
		beta := b.Real("beta", 3)
		b.AddLogDensity(b.Check(gorgonia.HadamardProd(b.Check(Normal{Mu: 0.0, Sigma: 1.0}.LogProbs(beta)), mask)))
		return nil
	}
	cases := map[string]struct {
		p     int
		build MaskedBuildFunc
		opts  []SelectionOption
		want  string
	}{
		"p = 0":      {0, ok, nil, "at least one candidate term"},
		"nil build":  {3, nil, nil, "nil build function"},
		"nil option": {3, ok, []SelectionOption{nil}, "option 0 is nil"},
		"too few coords": {3, func(b *Builder, mask *gorgonia.Node) error {
			beta := b.Real("beta", 2)
			b.AddLogDensity(b.Check(gorgonia.Mul(b.Check(gorgonia.Sum(mask)), b.Check(gorgonia.Sum(beta)))))
			return nil
		}, nil, "one coordinate per term"},
		"shared": {3, ok, []SelectionOption{WithSelectionShared(1)}, "one coordinate per term"},
		"build error": {3, func(b *Builder, mask *gorgonia.Node) error {
			return errors.New("no data")
		}, nil, "no data"},
		"builder error": {3, func(b *Builder, mask *gorgonia.Node) error {
			b.Real("beta", 3)
			b.Real("beta", 3)
			return nil
		}, nil, "already used"},
		"panic": {3, func(b *Builder, mask *gorgonia.Node) error {
			panic("boom")
		}, nil, "panicked"},
		"simplex terms": {2, func(b *Builder, mask *gorgonia.Node) error {
			w := b.Simplex("w", 3)
			b.AddLogDensity(b.Check(gorgonia.Sum(b.Check(gorgonia.HadamardProd(b.Check(gorgonia.Slice(w, gorgonia.S(0, 2))), mask)))))
			return nil
		}, nil, "not elementwise"},
	}
	for name, c := range cases {
		_, err := NewMaskedSelectionSpace(c.p, c.build, c.opts...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
	sp, err := NewMaskedSelectionSpace(3, ok)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewTerms(4, 1)
	if _, err := sp.Model(other); err == nil {
		t.Error("a term set over 4 terms in a space of 3: no error")
	}
}
