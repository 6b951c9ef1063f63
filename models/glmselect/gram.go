package glmselect

import (
	"container/list"
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"

	"github.com/trjgo/trj/ppl"
)

// collinearTol is the relative pivot test of gram.factor: a term whose
// column keeps less than this fraction of its sum of squares after
// projection on the model's earlier columns (1 − R² of its regression on
// them) is exactly collinear with them, up to rounding.
const collinearTol = 1e-10

// fullGramMaxP is the largest number of terms whose Gram matrix gram
// keeps whole: p² floats (32 MB at 2,000) built at O(n p²). Above it,
// rows are computed when first read and kept in a bounded cache
// (rowCache): a chain reads the rows of the terms its models hold, a few
// hundred at most in practice, which costs n p each instead of n p² in
// all, and memory stays O(n p) for the design plus the cache.
const fullGramMaxP = 2000

// rowCacheBytes bounds the rows kept when the Gram matrix is not whole.
const rowCacheBytes = 64 << 20

// gram is what the g-priors need of the data, once: the Gram matrix of
// the standardised centred predictors (their correlations times n − 1),
// their inner products with y − ȳ and ‖y − ȳ‖². Its rows are read
// through row, whole or from a cache; it is safe for concurrent use.
type gram struct {
	n, p     int
	c        []float64 // p×p when p ≤ fullGramMaxP, else nil
	rows     *rowCache // when c is nil
	cols     [][]float64
	inv      []float64 // 1/sd_j when c is nil: rows from the centred columns
	diag     []float64 // c's diagonal, read where c's stride would miss the cache
	xty      []float64
	syy      float64
	logScale []float64 // log sd_j: the data-unit Gram is c_ij sd_i sd_j
	// fullRank is set when the whole design passes factor's test with at
	// most n − 2 columns, so that every model has a g-prior but by its
	// size. It is only tested when the Gram matrix is kept whole: above,
	// inSupport factors each model instead.
	fullRank bool
	scratch  *sync.Pool // of *[]float64, inSupport's factors
}

func newGram(d *design) *gram {
	return newGramLimit(d, fullGramMaxP, rowCacheBytes)
}

// newGramLimit is newGram keeping the whole matrix up to maxFull terms
// and a cache of cacheBytes of rows above.
func newGramLimit(d *design, maxFull, cacheBytes int) *gram {
	p := d.p
	g := &gram{n: d.n, p: p, xty: make([]float64, p), diag: make([]float64, p), logScale: make([]float64, p)}
	g.scratch = &sync.Pool{New: func() any { return new([]float64) }}
	ybar := floats.Sum(d.y) / float64(d.n)
	yc := make([]float64, d.n)
	floats.AddConst(-ybar, floats.AddTo(yc, yc, d.y))
	g.syy = floats.Dot(yc, yc)
	for j := range p {
		g.logScale[j] = math.Log(d.scale[j])
	}
	if p > maxFull {
		// One standardised column at a time, so that xty and the
		// diagonal are those of the whole matrix's path to the bit.
		g.cols, g.inv = d.cols, make([]float64, p)
		std := make([]float64, d.n)
		for j := range p {
			g.inv[j] = 1 / d.scale[j]
			floats.ScaleTo(std, g.inv[j], d.cols[j])
			g.xty[j] = floats.Dot(std, yc)
			g.diag[j] = floats.Dot(std, std)
		}
		g.rows = newRowCache(cacheBytes/(8*p), g.computeRow)
		return g
	}
	g.c = make([]float64, p*p)
	std := make([][]float64, p)
	for j := range p {
		std[j] = make([]float64, d.n)
		floats.ScaleTo(std[j], 1/d.scale[j], d.cols[j])
	}
	for i := range p {
		g.xty[i] = floats.Dot(std[i], yc)
		for j := i; j < p; j++ {
			v := floats.Dot(std[i], std[j])
			g.c[i*p+j], g.c[j*p+i] = v, v
		}
	}
	for j := range p {
		g.diag[j] = g.c[j*p+j]
	}
	if p <= g.maxTerms() {
		all := make([]int, p)
		for j := range all {
			all[j] = j
		}
		_, g.fullRank = g.factor(all, make([]float64, p*p))
	}
	return g
}

// row returns row j of the Gram matrix, which the caller must not
// change.
func (g *gram) row(j int) []float64 {
	if g.c != nil {
		return g.c[j*g.p : (j+1)*g.p]
	}
	return g.rows.get(j)
}

// rowAtHand returns row j when it costs nothing to read (the whole
// matrix's, or a finished row in the cache), else nil.
func (g *gram) rowAtHand(j int) []float64 {
	if g.c != nil {
		return g.c[j*g.p : (j+1)*g.p]
	}
	return g.rows.peek(j)
}

// standardised appends term j's centred column divided by its standard
// deviation to dst (rows are computed from it): n values.
func (g *gram) standardised(j int, dst []float64) []float64 {
	if cap(dst) < g.n {
		dst = make([]float64, g.n)
	}
	dst = dst[:g.n]
	floats.ScaleTo(dst, g.inv[j], g.cols[j])
	return dst
}

// computeRow computes row j from the centred columns: one pass over the
// design, n p multiplications.
func (g *gram) computeRow(j int) []float64 {
	std := g.standardised(j, nil)
	r := make([]float64, g.p)
	for k, c := range g.cols {
		r[k] = floats.Dot(std, c) * g.inv[k]
	}
	r[j] = g.diag[j]
	return r
}

// factor writes the Cholesky factor of the Gram matrix of the terms idx
// into L (k×k, row-major, lower) and returns its log-determinant; ok is
// false when a pivot fails the relative test (the terms are exactly
// collinear), so that a singular X_γᵀX_γ is never passed for a regular one
// by rounding.
func (g *gram) factor(idx []int, L []float64) (logdet float64, ok bool) {
	if !g.cholesky(idx, L) {
		return math.Inf(-1), false
	}
	k := len(idx)
	// One logarithm per block of pivots: their product cannot overflow
	// over 16 pivots of a correlation-scale Gram matrix.
	prod := 1.0
	for r := range k {
		prod *= L[r*k+r]
		if r%16 == 15 {
			logdet += 2 * math.Log(prod)
			prod = 1
		}
	}
	return logdet + 2*math.Log(prod), true
}

// cholesky is factor without the log-determinant. It reads a row of the
// Gram matrix only where it is at hand (whole, or cached): for a term
// whose row is not, the r entries it needs are r inner products of the
// centred columns, n r multiplications instead of the row's n p, and the
// same numbers as the row's to the bit. A model tested or scored once,
// such as a proposal the chain rejects, thus costs O(n k²), and the row
// cache keeps the rows of the models chains stay in.
func (g *gram) cholesky(idx []int, L []float64) bool {
	k := len(idx)
	var std *[]float64 // a column standardised as computeRow does
	defer func() {
		if std != nil {
			g.scratch.Put(std)
		}
	}()
	for r := range k {
		row := g.rowAtHand(idx[r])
		if row == nil {
			if std == nil {
				std = g.scratch.Get().(*[]float64)
			}
			*std = g.standardised(idx[r], (*std)[:0])
		}
		for c := 0; c <= r; c++ {
			var v float64
			switch jc := idx[c]; {
			case row != nil:
				v = row[jc]
			case c == r:
				v = g.diag[jc]
			default:
				v = floats.Dot(*std, g.cols[jc]) * g.inv[jc]
			}
			for m := range c {
				v -= L[r*k+m] * L[c*k+m]
			}
			if c < r {
				L[r*k+c] = v / L[c*k+c]
				continue
			}
			if !(v > collinearTol*g.diag[idx[r]]) {
				return false
			}
			L[r*k+r] = math.Sqrt(v)
		}
	}
	return true
}

// inSupport reports whether model t has a g-prior (ppl.WithModelSupport):
// at most n − 2 terms, and, unless every column set of the design is
// known to be of full rank, a Cholesky factorisation of its Gram matrix
// passing the relative pivot test of factor. It is safe for concurrent
// use.
func (g *gram) inSupport(t ppl.Terms) (bool, error) {
	k := t.Count()
	if k > g.maxTerms() {
		return false, nil
	}
	if g.fullRank || k <= 1 {
		return true, nil
	}
	L := g.scratch.Get().(*[]float64)
	defer g.scratch.Put(L)
	if cap(*L) < k*k {
		*L = make([]float64, k*k)
	}
	return g.cholesky(t.Indices(), (*L)[:k*k]), nil
}

// solveChol overwrites b with C_γ⁻¹ b from the factor L of factor.
func solveChol(L []float64, k int, b []float64) {
	for r := range k {
		v := b[r]
		for m := range r {
			v -= L[r*k+m] * b[m]
		}
		b[r] = v / L[r*k+r]
	}
	for r := k - 1; r >= 0; r-- {
		v := b[r]
		for m := r + 1; m < k; m++ {
			v -= L[m*k+r] * b[m]
		}
		b[r] = v / L[r*k+r]
	}
}

// maxTerms is the largest model a g-prior is defined for: n − 2 terms
// (with the intercept, n − 1 columns, and a residual degree of freedom
// left for σ²).
func (g *gram) maxTerms() int { return g.n - 2 }

// offset is the g-prior's normalising term of model t, ½ log|X_γᵀX_γ| in
// data units, or −Inf when the model has no g-prior
// (ppl.WithModelOffset). It is safe for concurrent use.
func (g *gram) offset(t ppl.Terms) (float64, error) {
	idx := t.Indices()
	if len(idx) > g.maxTerms() {
		return math.Inf(-1), nil
	}
	ld, ok := g.factor(idx, make([]float64, len(idx)*len(idx)))
	if !ok {
		return math.Inf(-1), nil
	}
	for _, j := range idx {
		ld += 2 * g.logScale[j]
	}
	return ld / 2, nil
}

// rowCache keeps the most recently read rows of a Gram matrix, at most
// max of them, for several chains at once: a row is computed once by the
// first reader while later ones wait for it, and an evicted row stays
// valid for whoever still holds it (rows are never changed or reused).
type rowCache struct {
	mu      sync.Mutex
	max     int
	entries map[int]*rowEntry
	lru     list.List // of *rowEntry, most recent first
	compute func(int) []float64
}

type rowEntry struct {
	j     int
	row   []float64
	ready chan struct{} // closed once row is set
	elem  *list.Element
}

// newRowCache returns a cache of at most max rows (at least one)
// computed by compute.
func newRowCache(max int, compute func(int) []float64) *rowCache {
	return &rowCache{max: max, entries: map[int]*rowEntry{}, compute: compute}
}

// peek returns row j when it is cached and computed, else nil; it never
// computes nor waits.
func (rc *rowCache) peek(j int) []float64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	e, ok := rc.entries[j]
	if !ok {
		return nil
	}
	select {
	case <-e.ready:
		rc.lru.MoveToFront(e.elem)
		return e.row
	default:
		return nil
	}
}

// get returns row j, computing it if no one has.
func (rc *rowCache) get(j int) []float64 {
	rc.mu.Lock()
	if e, ok := rc.entries[j]; ok {
		rc.lru.MoveToFront(e.elem)
		rc.mu.Unlock()
		<-e.ready
		return e.row
	}
	e := &rowEntry{j: j, ready: make(chan struct{})}
	e.elem = rc.lru.PushFront(e)
	rc.entries[j] = e
	for rc.lru.Len() > max(rc.max, 1) {
		old := rc.lru.Remove(rc.lru.Back()).(*rowEntry)
		delete(rc.entries, old.j)
	}
	rc.mu.Unlock()
	e.row = rc.compute(j)
	close(e.ready)
	return e.row
}
