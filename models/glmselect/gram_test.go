package glmselect

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/trjgo/trj/ppl"
)

// TestGramRowsOnDemand checks the Gram matrix read by rows from a cache
// of three (the path above fullGramMaxP terms) against the whole matrix:
// the same diagonal and Xᵀy to the bit, rows to rounding from eight
// goroutines at once, and the same log evidences, neighbour evidences,
// supports and scorer values model by model, −Inf where a model holds
// both copies of scorerDesign's column 2.
func TestGramRowsOnDemand(t *testing.T) {
	const n, p = 40, 12
	X, y := scorerDesign(n, p)
	s, d, err := prepare(X, y, &Settings{})
	if err != nil {
		t.Fatal(err)
	}
	full := newGramLimit(d, p, 0)
	lazy := newGramLimit(d, 0, 3*8*p)
	if full.c == nil || lazy.c != nil || lazy.rows.max != 3 {
		t.Fatalf("full matrix kept: %v, %v; want true, false; cache of %d rows, want 3", full.c != nil, lazy.c != nil, lazy.rows.max)
	}
	for j := range p {
		if full.diag[j] != lazy.diag[j] || full.xty[j] != lazy.xty[j] {
			t.Errorf("term %d: diagonal %v, %v; xty %v, %v", j, full.diag[j], lazy.diag[j], full.xty[j], lazy.xty[j])
		}
	}
	var wg sync.WaitGroup
	errs := make([]float64, 8)
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range 200 {
				j := rng.IntN(p)
				a, b := full.row(j), lazy.row(j)
				for k := range p {
					errs[w] = max(errs[w], math.Abs(a[k]-b[k])/math.Sqrt(full.diag[j]*full.diag[k]))
				}
			}
		}()
	}
	wg.Wait()
	for w, e := range errs {
		if e > 1e-13 {
			t.Errorf("goroutine %d: rows differ by %.3g of the diagonal", w, e)
		}
	}

	r, err := resolve(s.Prior, d.n, d.p)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := newEvidence(&s, d, r)
	if err != nil {
		t.Fatal(err)
	}
	el, err := newEvidence(&s, d, r)
	if err != nil {
		t.Fatal(err)
	}
	ef.gm, el.gm = full, lazy
	sf, err := newScorer(ef, d)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := newScorer(el, d)
	if err != nil {
		t.Fatal(err)
	}
	agree := func(a, b float64) bool {
		return a == b || math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	nf, nl := make([]float64, p), make([]float64, p)
	infs := 0
	for range 300 {
		var idx []int
		for j := range p {
			if rng.IntN(3) == 0 {
				idx = append(idx, j)
			}
		}
		tm, err := ppl.NewTerms(p, idx...)
		if err != nil {
			t.Fatal(err)
		}
		a, err := ef.NeighbourLogEvidences(tm, nf)
		if err != nil {
			t.Fatal(err)
		}
		b, err := el.NeighbourLogEvidences(tm, nl)
		if err != nil {
			t.Fatal(err)
		}
		if math.IsInf(a, -1) {
			infs++
		}
		if !agree(a, b) {
			t.Errorf("model %v: log evidence %v whole, %v by rows", idx, a, b)
		}
		for j := range p {
			if !agree(nf[j], nl[j]) {
				t.Errorf("model %v, flip %d: %v whole, %v by rows", idx, j, nf[j], nl[j])
			}
		}
		if fa, _ := full.inSupport(tm); fa != (a > math.Inf(-1)) {
			t.Errorf("model %v: in support %v, log evidence %v", idx, fa, a)
		}
		if la, _ := lazy.inSupport(tm); la != (b > math.Inf(-1)) {
			t.Errorf("model %v: in support by rows %v, log evidence %v", idx, la, b)
		}
		a, _ = sf.Score(idx)
		b, _ = sl.Score(idx)
		if !agree(a, b) {
			t.Errorf("model %v: scorer %v whole, %v by rows", idx, a, b)
		}
	}
	if infs == 0 || infs == 300 {
		t.Errorf("%d of 300 models outside the support: want some, not all", infs)
	}
}

// TestGPriorGraphByColumns checks the g-prior's graph above fullGramMaxP
// terms, where βᵀXᵀXβ is ‖X_γβ‖² from the columns, against the graph
// that reads the whole Gram matrix: the same log-density to rounding at
// random points of random models.
func TestGPriorGraphByColumns(t *testing.T) {
	const n, p = 40, 12
	X, y := scorerDesign(n, p)
	s, d, err := prepare(X, y, &Settings{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := resolve(s.Prior, d.n, d.p)
	if err != nil {
		t.Fatal(err)
	}
	var spaces []*ppl.SelectionSpace
	for _, gm := range []*gram{newGramLimit(d, p, 0), newGramLimit(d, 0, 3*8*p)} {
		gp := &gaussianPlan{d: d, r: r, gram: gm}
		sp, err := ppl.NewSelectionSpace(p, func(b *ppl.Builder, t ppl.Terms) error { return gp.graph(b, t.Indices(), nil) })
		if err != nil {
			t.Fatal(err)
		}
		spaces = append(spaces, sp)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20 {
		var idx []int
		for j := range p {
			if rng.IntN(3) == 0 && j != 5 {
				idx = append(idx, j)
			}
		}
		tm, err := ppl.NewTerms(p, idx...)
		if err != nil {
			t.Fatal(err)
		}
		var lp [2]float64
		var x []float64
		for i, sp := range spaces {
			m, err := sp.Build(tm)
			if err != nil {
				t.Fatal(err)
			}
			if x == nil {
				x = make([]float64, m.Dim())
				for k := range x {
					x[k] = 0.3 * rng.NormFloat64()
				}
			}
			if lp[i], err = m.LogDensity(x); err != nil {
				t.Fatal(err)
			}
		}
		if math.Abs(lp[0]-lp[1]) > 1e-9*math.Max(1, math.Abs(lp[0])) {
			t.Errorf("model %v: log-density %v from the Gram matrix, %v from the columns", idx, lp[0], lp[1])
		}
	}
}

// TestGramEntriesAtHand checks the on-demand Gram matrix's factor when
// its rows are not cached (entries from inner products of the columns)
// against the same factor from the cached rows, to the bit, and its
// correlations against the whole matrix's to rounding: a factor must not
// depend on what the row cache happens to hold, and neither may read a
// row it lacks.
func TestGramEntriesAtHand(t *testing.T) {
	const n, p = 40, 12
	X, y := scorerDesign(n, p)
	_, d, err := prepare(X, y, &Settings{})
	if err != nil {
		t.Fatal(err)
	}
	full := newGramLimit(d, p, 0)
	lazy := newGramLimit(d, 0, 2*8*p*p)
	idx := []int{0, 3, 4, 7, 9, 11}
	k := len(idx)
	L1, L2 := make([]float64, k*k), make([]float64, k*k)
	ok1 := lazy.cholesky(idx, L1)
	if n := len(lazy.rows.entries); n != 0 {
		t.Fatalf("factor without cached rows computed %d rows, want 0", n)
	}
	for _, j := range idx {
		lazy.row(j)
	}
	ok2 := lazy.cholesky(idx, L2)
	if !ok1 || !ok2 {
		t.Fatalf("factors failed: %v, %v", ok1, ok2)
	}
	for i := range L1 {
		if L1[i] != L2[i] {
			t.Fatalf("entry %d of the factor: %v from inner products, %v from rows", i, L1[i], L2[i])
		}
	}
	for i := range p {
		for j := range p {
			if a, b := full.corr(i, j), lazy.corr(i, j); math.Abs(a-b) > 1e-13 {
				t.Errorf("corr(%d, %d): %v whole, %v on demand", i, j, a, b)
			}
		}
	}
	if n := len(lazy.rows.entries); n != k {
		t.Errorf("correlations computed %d rows, want none beyond the %d read", n-k, k)
	}
}
