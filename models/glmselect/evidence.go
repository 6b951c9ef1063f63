package glmselect

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/ppl"
)

// Evidence computes the closed-form log evidence of the models of Gaussian
// with the same data and settings: the integral of each model's
// log-density, so that the exact posterior over the models is known.
//
// Under a g-prior with fixed g, with R²_γ the model's coefficient of
// determination and k its number of terms,
//
//	log p(y | γ) = C + ((n−1−k)/2) log(1+g) − ((n−1)/2) log(1 + g(1−R²_γ)),
//	C = log Γ((n−1)/2) − ((n−1)/2) log(π ‖y−ȳ‖²) − ½ log n,
//
// the constant C being that of the improper priors on the intercept and σ²,
// common to all models. Under HyperG, HyperGN and ZellnerSiow it is that
// expression's integral over p(g), computed per model by Gauss–Legendre
// quadrature in log g around the integrand's mode (relative error about
// 1e-12). Under NormalInverseGamma, with Z = [1, X_γ] on the standardised
// predictors (n × d), P = ZᵀZ + I/G and S = yᵀy − yᵀZ P⁻¹ Zᵀy,
//
//	log p(y | γ) = −(n/2) log 2π − (d/2) log G − ½ log|P| + A log B − log Γ(A)
//	               + log Γ(A + n/2) − (A + n/2) log(B + S/2).
//
// Models outside the prior's support (Support) have log evidence −Inf.
// Each model costs one Cholesky factorisation of its size. An Evidence is
// not safe for concurrent use.
type Evidence struct {
	n, p   int
	r      resolved
	prior  ppl.ModelPrior
	names  []string
	scale  []float64
	gm     *gram     // g-priors
	c0     float64   // g-priors' common constant C
	nodes  []float64 // Gauss–Legendre rule on (−1, 1), hyper priors
	wts    []float64
	nig    *nigGram
	l, rhs []float64 // scratch
	inv    []float64
	scr    []float64   // 2(p+1), NeighbourLogEvidences' scratch
	rows   [][]float64 // NeighbourLogEvidences' Gram rows
	log1pG float64     // log(1 + g) of a fixed g
}

// nigGram is the normal-inverse-gamma evidence's data: the Gram matrix of
// [1, X] on the standardised predictors, [1, X]ᵀy and yᵀy.
type nigGram struct {
	gram, zty []float64
	yy        float64
	chol      []mat.Cholesky // by size, reused
	sym       []float64
	sol       []mat.VecDense
}

// quadNodes is the number of Gauss–Legendre nodes of the hyper priors'
// integral over g.
const quadNodes = 256

// NewEvidence returns the evidence calculator of Gaussian(X, y, settings).
func NewEvidence(X mat.Matrix, y []float64, settings *Settings) (*Evidence, error) {
	s, d, err := prepare(X, y, settings)
	if err != nil {
		return nil, err
	}
	r, err := resolve(s.Prior, d.n, d.p)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(d, &r); err != nil {
		return nil, err
	}
	return newEvidence(&s, d, r)
}

// newEvidence is NewEvidence of a checked design and prior.
func newEvidence(s *Settings, d *design, r resolved) (*Evidence, error) {
	p1 := d.p + 1
	e := &Evidence{n: d.n, p: d.p, r: r, prior: s.ModelPrior, log1pG: math.Log1p(r.g), names: d.names, scale: d.scale,
		rhs: make([]float64, p1), inv: make([]float64, p1), scr: make([]float64, 2*p1)}
	if r.isG() {
		if s.Raw {
			return nil, fmt.Errorf("glmselect: the g-priors are defined on centred predictors, so Settings.Raw applies only to NormalInverseGamma")
		}
		e.gm = newGram(d)
		n := float64(d.n)
		lg, _ := math.Lgamma((n - 1) / 2)
		e.c0 = lg - (n-1)/2*math.Log(math.Pi*e.gm.syy) - 0.5*math.Log(n)
		if r.kind != gFixed {
			e.nodes, e.wts = make([]float64, quadNodes), make([]float64, quadNodes)
			quad.Legendre{}.FixedLocations(e.nodes, e.wts, -1, 1)
		}
		return e, nil
	}
	e.nig = newNIGGram(d)
	return e, nil
}

func newNIGGram(d *design) *nigGram {
	p1 := d.p + 1
	g := &nigGram{gram: make([]float64, p1*p1), zty: make([]float64, p1), chol: make([]mat.Cholesky, p1+1),
		sol: make([]mat.VecDense, p1+1), sym: make([]float64, p1*p1)}
	col := func(j int) []float64 {
		c := make([]float64, d.n)
		if j == 0 {
			for i := range c {
				c[i] = 1
			}
			return c
		}
		return floats.ScaleTo(c, 1/d.scale[j-1], d.cols[j-1])
	}
	cols := make([][]float64, p1)
	for i := range p1 {
		cols[i] = col(i)
	}
	for i := range p1 {
		g.zty[i] = floats.Dot(cols[i], d.y)
		for j := i; j < p1; j++ {
			v := floats.Dot(cols[i], cols[j])
			g.gram[i*p1+j], g.gram[j*p1+i] = v, v
		}
	}
	g.yy = floats.Dot(d.y, d.y)
	return g
}

// P is the number of candidate terms.
func (e *Evidence) P() int { return e.p }

// clone returns a copy sharing e's data with scratch of its own.
func (e *Evidence) clone() *Evidence {
	c := *e
	p1 := e.p + 1
	c.l, c.rows = nil, nil
	c.rhs, c.inv, c.scr = make([]float64, p1), make([]float64, p1), make([]float64, 2*p1)
	if e.nig != nil {
		g := *e.nig
		g.chol, g.sol, g.sym = make([]mat.Cholesky, p1+1), make([]mat.VecDense, p1+1), make([]float64, p1*p1)
		c.nig = &g
	}
	return &c
}

// concurrent returns LogEvidence and NeighbourLogEvidences as functions
// safe for concurrent use (ppl.WithModelEvidence,
// ppl.WithNeighbourEvidence): each call evaluates on a clone of e from one
// pool, so e itself must not be used after.
func (e *Evidence) concurrent() (logEvidence func(ppl.Terms) (float64, error), neighbours func(ppl.Terms, []float64) (float64, error)) {
	pool := sync.Pool{New: func() any { return e.clone() }}
	logEvidence = func(t ppl.Terms) (float64, error) {
		c := pool.Get().(*Evidence)
		defer pool.Put(c)
		return c.LogEvidence(t)
	}
	neighbours = func(t ppl.Terms, le []float64) (float64, error) {
		c := pool.Get().(*Evidence)
		defer pool.Put(c)
		return c.NeighbourLogEvidences(t, le)
	}
	return logEvidence, neighbours
}

// Prior is the Gaussian prior the evidences are of.
func (e *Evidence) Prior() GaussianPrior { return e.r.display }

// LogEvidence returns log p(y | γ) of the model with terms t, −Inf when
// the prior gives the model no mass.
func (e *Evidence) LogEvidence(t ppl.Terms) (float64, error) {
	if t.P() != e.p {
		return math.NaN(), fmt.Errorf("glmselect: a term set over %d terms for %d predictors", t.P(), e.p)
	}
	return e.fit(t.Indices(), nil, nil)
}

// fit returns model idx's log evidence and, when mean and vr are not nil,
// writes its coefficients' posterior means and variances (data units).
func (e *Evidence) fit(idx []int, mean, vr []float64) (float64, error) {
	if e.nig != nil {
		return e.nigFit(idx, mean, vr)
	}
	k := len(idx)
	gm := e.gm
	if k > gm.maxTerms() {
		return math.Inf(-1), nil
	}
	e.l = grow(e.l, k*k) // NeighbourLogEvidences reads the factor there
	L := e.l
	if _, ok := gm.factor(idx, L); !ok {
		return math.Inf(-1), nil
	}
	b := e.rhs[:k]
	for i, j := range idx {
		b[i] = gm.xty[j]
	}
	solveChol(L, k, b) // b is now the standardised least-squares fit
	var r2 float64
	for i, j := range idx {
		r2 += gm.xty[j] * b[i]
	}
	r2 /= gm.syy
	r2 = math.Min(math.Max(r2, 0), 1)
	var le, es, es2, esq float64
	if e.r.kind == gFixed {
		g := e.r.g
		le = e.c0 + e.gTerm(g, k, r2)
		s := g / (1 + g)
		es, es2, esq = s, s*s, s*(1-s*r2)
	} else {
		le, es, es2, esq = e.integrate(k, r2)
		le += e.c0
	}
	if mean == nil {
		return le, nil
	}
	n := float64(e.n)
	for i, j := range idx {
		inv := e.inv[:k]
		clear(inv)
		inv[i] = 1
		solveChol(L, k, inv)
		bh := b[i] / e.scale[j]
		mean[i] = es * bh
		vr[i] = esq*gm.syy/(n-3)*inv[i]/(e.scale[j]*e.scale[j]) + (es2-es*es)*bh*bh
	}
	return le, nil
}

// gTerm is the fixed-g evidence's model-dependent part.
func (e *Evidence) gTerm(g float64, k int, r2 float64) float64 {
	n := float64(e.n)
	lg := e.log1pG
	if g != e.r.g || lg == 0 {
		lg = math.Log1p(g)
	}
	var l float64
	if x := g * (1 - r2); x > 1 {
		l = math.Log(1 + x) // as exact there, and faster
	} else {
		l = math.Log1p(x)
	}
	return (n-1-float64(k))/2*lg - (n-1)/2*l
}

// integrate returns log ∫ p(g) exp(gTerm(g)) dg over the hyper prior and
// the posterior means of the shrinkage s = g/(1+g), of s² and of
// s(1 − s R²), by Gauss–Legendre quadrature in t = log g, mapped to (−1, 1)
// by t = t* + w x/(1 − x²) around the mode t* with w the integrand's
// curvature scale there.
func (e *Evidence) integrate(k int, r2 float64) (logI, es, es2, esq float64) {
	h := func(t float64) float64 {
		g := math.Exp(t)
		return e.r.logPriorG(g) + t + e.gTerm(g, k, r2)
	}
	// The mode: the best point of a coarse grid, refined by golden-section
	// search on its neighbours.
	best, hb := -40.0, math.Inf(-1)
	for t := -40.0; t <= 80; t += 0.5 {
		if v := h(t); v > hb {
			best, hb = t, v
		}
	}
	lo, hi := best-0.5, best+0.5
	const phi = 0.6180339887498949
	for range 60 {
		a, b := hi-phi*(hi-lo), lo+phi*(hi-lo)
		if h(a) > h(b) {
			hi = b
		} else {
			lo = a
		}
	}
	ts := (lo + hi) / 2
	hs := h(ts)
	const step = 1e-3
	curv := -(h(ts+step) - 2*hs + h(ts-step)) / (step * step)
	w := 1.0
	if curv > 0 && !math.IsInf(curv, 0) {
		w = 1 / math.Sqrt(curv)
	}
	var sum, s1, s2, sq float64
	for i, x := range e.nodes {
		v := 1 - x*x
		t := ts + w*x/v
		f := e.wts[i] * math.Exp(h(t)-hs) * w * (1 + x*x) / (v * v)
		if f == 0 || math.IsNaN(f) {
			continue
		}
		s := 1 / (1 + math.Exp(-t)) // g/(1+g)
		sum += f
		s1 += f * s
		s2 += f * s * s
		sq += f * s * (1 - s*r2)
	}
	return hs + math.Log(sum), s1 / sum, s2 / sum, sq / sum
}

// nigFit is fit under the normal-inverse-gamma prior.
func (e *Evidence) nigFit(idx []int, mean, vr []float64) (float64, error) {
	g, q := e.nig, e.r.nig
	d, p1 := 1+len(idx), e.p+1
	cols := make([]int, 1, d)
	for _, i := range idx {
		cols = append(cols, i+1)
	}
	sym := g.sym[:d*d]
	for r, i := range cols {
		for c, j := range cols {
			sym[r*d+c] = g.gram[i*p1+j]
		}
		sym[r*d+r] += 1 / q.G
		e.rhs[r] = g.zty[i]
	}
	ch := &g.chol[d]
	if !ch.Factorize(mat.NewSymDense(d, sym)) {
		return math.NaN(), fmt.Errorf("glmselect: the posterior precision of a model with %d columns is not positive definite", d)
	}
	rhs := mat.NewVecDense(d, e.rhs[:d])
	if err := ch.SolveVecTo(&g.sol[d], rhs); err != nil {
		return math.NaN(), err
	}
	S := g.yy - mat.Dot(rhs, &g.sol[d])
	n, df := float64(e.n), float64(d)
	la, _ := math.Lgamma(q.A)
	lan, _ := math.Lgamma(q.A + n/2)
	le := -n/2*math.Log(2*math.Pi) - df/2*math.Log(q.G) - 0.5*ch.LogDet() + q.A*math.Log(q.B) - la + lan - (q.A+n/2)*math.Log(q.B+S/2)
	if mean != nil {
		es2 := (q.B + S/2) / (q.A + n/2 - 1)
		var inv mat.SymDense
		if err := ch.InverseTo(&inv); err != nil {
			return math.NaN(), err
		}
		for i, j := range idx {
			mean[i] = g.sol[d].AtVec(1+i) / e.scale[j]
			vr[i] = es2 * inv.At(1+i, 1+i) / (e.scale[j] * e.scale[j])
		}
	}
	return le, nil
}

// Support is the set of models a Gaussian prior gives mass to.
type Support struct {
	// MaxTerms is the largest model with prior mass: n − 2 terms under a
	// g-prior (with the intercept and a degree of freedom for σ², the
	// most the data can fit), p under NormalInverseGamma.
	MaxTerms int
	// Collinear lists the terms that belong to an exactly collinear set
	// (a column that is a linear combination of others and the
	// intercept's, up to rounding): under a g-prior no model holds a whole
	// such set. It is computed when p < n (with more terms than
	// observations every n of them are collinear, and MaxTerms is the
	// bound that matters) and p ≤ 2,000 (above, the Gram matrix is never
	// built whole; CollinearSets finds the sets from the columns); nil
	// otherwise or when there is none.
	Collinear []int
	// Names names the terms.
	Names []string
}

// Limited reports whether some models have no prior mass.
func (s Support) Limited() bool { return s.MaxTerms < len(s.Names) || len(s.Collinear) > 0 }

// String describes the support for outputs: "every model", or "models of
// at most 45 terms" and "no model holding a whole exactly collinear set
// (3 terms: x1, x2, x7)".
func (s Support) String() string {
	if !s.Limited() {
		return "every model"
	}
	var parts []string
	if s.MaxTerms < len(s.Names) {
		parts = append(parts, "models of at most "+strconv.Itoa(s.MaxTerms)+" terms")
	}
	if len(s.Collinear) > 0 {
		names := ""
		for i, j := range s.Collinear {
			if i > 0 {
				names += ", "
			}
			names += s.Names[j]
		}
		parts = append(parts, fmt.Sprintf("no model holding a whole exactly collinear set (%d terms in such sets: %s)", len(s.Collinear), names))
	}
	if len(parts) == 2 {
		return parts[0] + "; " + parts[1]
	}
	return parts[0]
}

// Support returns the models the prior gives mass to; the others have
// prior probability zero in Gaussian's space and in Enumerate.
func (e *Evidence) Support() Support {
	s := Support{MaxTerms: e.p, Names: e.names}
	if e.gm == nil {
		return s
	}
	s.MaxTerms = min(e.p, e.gm.maxTerms())
	if e.p >= e.n || e.gm.c == nil {
		// Beyond fullGramMaxP terms the Gram matrix is never built whole,
		// and its eigendecomposition would cost O(p³): CollinearSets names
		// the sets from the columns.
		return s
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(e.p, append([]float64(nil), e.gm.c...)), true) {
		return s
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	top := floats.Max(vals)
	in := make([]bool, e.p)
	for c, v := range vals {
		if v > collinearTol*top {
			continue
		}
		for j := range e.p {
			if math.Abs(vecs.At(j, c)) > 1e-6 {
				in[j] = true
			}
		}
	}
	for j, b := range in {
		if b {
			s.Collinear = append(s.Collinear, j)
		}
	}
	return s
}

// ModelProb is one model's posterior probability.
type ModelProb struct {
	Terms ppl.Terms
	P     float64
}

// Exact is the exact posterior over a space's models.
type Exact struct {
	// PIP[j] is term j's posterior inclusion probability.
	PIP []float64
	// Mean[j] and SD[j] are the posterior mean and standard deviation of
	// term j's coefficient in y-units per unit of its predictor, averaged
	// over the models (0 in a model without the term), as BMS's coef
	// reports them.
	Mean, SD []float64
	// Size[k] is the posterior probability of model size k = 0, …, p.
	Size []float64
	// LogZ is log Σ_γ p(γ) p(y | γ).
	LogZ float64
	// Top lists the most probable models, most probable first.
	Top []ModelProb
	// Names names the terms.
	Names []string
}

// MaxExactTerms is the largest p that Enumerate accepts (2^26 models).
const MaxExactTerms = 26

// Enumerate computes the exact posterior over all 2^p models and keeps the
// top most probable. It checks ctx between blocks of models.
func (e *Evidence) Enumerate(ctx context.Context, top int) (*Exact, error) {
	p := e.p
	if p > MaxExactTerms {
		return nil, fmt.Errorf("glmselect: %d terms are too many to enumerate (at most %d)", p, MaxExactTerms)
	}
	N := 1 << p
	lp := make([]float64, N)
	sizeLP := make([]float64, p+1)
	for k := range sizeLP {
		t, _ := ppl.NewTerms(p)
		for i := range k {
			t = t.With(i)
		}
		sizeLP[k] = e.prior.LogModelPrior(t)
	}
	exchangeable := true
	switch e.prior.(type) {
	case ppl.BetaBinomial, ppl.Bernoulli, ppl.UniformModels:
	default:
		exchangeable = false
	}
	// Running sums of w·E[β_j] and w·E[β_j²], scaled by exp(−lmax).
	m1, m2 := make([]float64, p), make([]float64, p)
	mean, vr := make([]float64, p), make([]float64, p)
	lmax := math.Inf(-1)
	idx := make([]int, 0, p)
	for m := range N {
		if m%(1<<12) == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		idx = idx[:0]
		for i := range p {
			if m&(1<<i) != 0 {
				idx = append(idx, i)
			}
		}
		le, err := e.fit(idx, mean, vr)
		if err != nil {
			return nil, err
		}
		var prior float64
		if exchangeable {
			prior = sizeLP[len(idx)]
		} else {
			prior = e.prior.LogModelPrior(maskTerms(p, m))
		}
		lp[m] = prior + le
		if math.IsInf(lp[m], -1) {
			continue
		}
		if lp[m] > lmax {
			f := math.Exp(lmax - lp[m])
			floats.Scale(f, m1)
			floats.Scale(f, m2)
			lmax = lp[m]
		}
		w := math.Exp(lp[m] - lmax)
		for i, j := range idx {
			m1[j] += w * mean[i]
			m2[j] += w * (vr[i] + mean[i]*mean[i])
		}
	}
	logZ := floats.LogSumExp(lp)
	ex := &Exact{PIP: make([]float64, p), Mean: make([]float64, p), SD: make([]float64, p), Size: make([]float64, p+1), LogZ: logZ, Names: e.names}
	f := math.Exp(lmax - logZ)
	for j := range p {
		ex.Mean[j] = m1[j] * f
		ex.SD[j] = math.Sqrt(math.Max(0, m2[j]*f-ex.Mean[j]*ex.Mean[j]))
	}
	for m, v := range lp {
		w := math.Exp(v - logZ)
		lp[m] = w
		k := 0
		for i := range p {
			if m&(1<<i) != 0 {
				ex.PIP[i] += w
				k++
			}
		}
		ex.Size[k] += w
	}
	order := make([]int, N)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return lp[order[a]] > lp[order[b]] })
	for _, m := range order[:min(top, N)] {
		ex.Top = append(ex.Top, ModelProb{Terms: maskTerms(p, m), P: lp[m]})
	}
	return ex, nil
}

func maskTerms(p, m int) ppl.Terms {
	var idx []int
	for i := range p {
		if m&(1<<i) != 0 {
			idx = append(idx, i)
		}
	}
	t, _ := ppl.NewTerms(p, idx...)
	return t
}
