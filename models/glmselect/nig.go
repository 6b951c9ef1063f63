package glmselect

import (
	"context"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/ppl"
)

// NIG computes the closed-form log evidence of the models of Gaussian with
// the same data and settings. With Z = [1, X_γ] (n × d), P = ZᵀZ + I/G and
// S = yᵀy − yᵀZ P⁻¹ Zᵀy,
//
//	log p(y | γ) = −(n/2) log 2π − (d/2) log G − ½ log|P| + A log B − log Γ(A)
//	               + log Γ(A + n/2) − (A + n/2) log(B + S/2),
//
// from y | σ² ~ N(0, σ²(I + G ZZᵀ)) integrated over σ² ~ InverseGamma(A, B).
// It keeps the Gram matrix of [1, X], so each model costs one Cholesky
// factorisation of size d. A NIG is not safe for concurrent use.
type NIG struct {
	n, p    int
	g, a, b float64
	gram    []float64 // (p+1)×(p+1) Gram matrix of [1, X]
	zty     []float64 // [1, X]ᵀy
	yy      float64
	prior   ppl.ModelPrior
	names   []string
	chol    []mat.Cholesky // by size, reused
	sym     []float64
	rhs     []float64
	sol     []mat.VecDense // by size, reused
}

// NewNIG returns the evidence calculator of Gaussian(X, y, settings).
func NewNIG(X mat.Matrix, y []float64, settings *Settings) (*NIG, error) {
	s, d, err := prepare(X, y, settings)
	if err != nil {
		return nil, err
	}
	p1 := d.p + 1
	e := &NIG{n: d.n, p: d.p, g: s.G, a: s.A, b: s.B, gram: make([]float64, p1*p1), zty: make([]float64, p1),
		prior: s.ModelPrior, names: d.names, chol: make([]mat.Cholesky, p1+1), sol: make([]mat.VecDense, p1+1), sym: make([]float64, p1*p1), rhs: make([]float64, p1)}
	col := func(j int) []float64 {
		if j == 0 {
			ones := make([]float64, d.n)
			for i := range ones {
				ones[i] = 1
			}
			return ones
		}
		return d.cols[j-1]
	}
	for i := range p1 {
		ci := col(i)
		e.zty[i] = floats.Dot(ci, d.y)
		for j := i; j < p1; j++ {
			v := floats.Dot(ci, col(j))
			e.gram[i*p1+j], e.gram[j*p1+i] = v, v
		}
	}
	e.yy = floats.Dot(d.y, d.y)
	return e, nil
}

// P is the number of candidate terms.
func (e *NIG) P() int { return e.p }

// LogEvidence returns log p(y | γ) of the model with terms t.
func (e *NIG) LogEvidence(t ppl.Terms) (float64, error) {
	if t.P() != e.p {
		return math.NaN(), fmt.Errorf("glmselect: a term set over %d terms for %d predictors", t.P(), e.p)
	}
	idx := t.Indices()
	cols := make([]int, 1, 1+len(idx))
	for _, i := range idx {
		cols = append(cols, i+1)
	}
	return e.logEvidence(cols)
}

// logEvidence takes the columns of [1, X] in the model, 0 first.
func (e *NIG) logEvidence(cols []int) (float64, error) {
	d, p1 := len(cols), e.p+1
	sym := e.sym[:d*d]
	for r, i := range cols {
		for c, j := range cols {
			sym[r*d+c] = e.gram[i*p1+j]
		}
		sym[r*d+r] += 1 / e.g
		e.rhs[r] = e.zty[i]
	}
	ch := &e.chol[d]
	if !ch.Factorize(mat.NewSymDense(d, sym)) {
		return math.NaN(), fmt.Errorf("glmselect: the posterior precision of a model with %d columns is not positive definite", d)
	}
	rhs := mat.NewVecDense(d, e.rhs[:d])
	if err := ch.SolveVecTo(&e.sol[d], rhs); err != nil {
		return math.NaN(), err
	}
	S := e.yy - mat.Dot(rhs, &e.sol[d])
	n, df := float64(e.n), float64(d)
	la, _ := math.Lgamma(e.a)
	lan, _ := math.Lgamma(e.a + n/2)
	return -n/2*math.Log(2*math.Pi) - df/2*math.Log(e.g) - 0.5*ch.LogDet() + e.a*math.Log(e.b) - la + lan - (e.a+n/2)*math.Log(e.b+S/2), nil
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
func (e *NIG) Enumerate(ctx context.Context, top int) (*Exact, error) {
	p := e.p
	if p > MaxExactTerms {
		return nil, fmt.Errorf("glmselect: %d terms are too many to enumerate (at most %d)", p, MaxExactTerms)
	}
	N := 1 << p
	lp := make([]float64, N)
	cols := make([]int, 0, p+1)
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
	for m := range N {
		if m%(1<<14) == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cols = append(cols[:0], 0)
		for i := range p {
			if m&(1<<i) != 0 {
				cols = append(cols, i+1)
			}
		}
		le, err := e.logEvidence(cols)
		if err != nil {
			return nil, err
		}
		var prior float64
		if exchangeable {
			prior = sizeLP[len(cols)-1]
		} else {
			prior = e.prior.LogModelPrior(maskTerms(p, m))
		}
		lp[m] = prior + le
	}
	logZ := floats.LogSumExp(lp)
	ex := &Exact{PIP: make([]float64, p), Size: make([]float64, p+1), LogZ: logZ, Names: e.names}
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
	sort.Slice(order, func(a, b int) bool { return lp[order[a]] > lp[order[b]] })
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
