package mc3

import (
	"math"
	"math/rand/v2"
	"slices"
)

// GPrior is the closed-form posterior of the Gaussian regression under
// Zellner's g-prior on the centred predictors (flat intercept,
// p(σ²) ∝ 1/σ², g = n) with a beta-binomial(1, 1) model prior, written
// here independently of trj's models/glmselect and selection so that the
// reference checks them:
//
//	log p(y | γ) − log p(y | ∅) = ((n−1−k)/2) log(1+g) − ((n−1)/2) log(1 + g(1 − R²_γ)),
//
// supported on models of at most n − 2 terms whose centred columns are
// linearly independent (a Cholesky pivot keeping at least 1e-10 of its
// column's sum of squares, the test glmselect documents).
type GPrior struct {
	n, p int
	g    float64
	xx   []float64 // centred Gram matrix, p×p row-major
	xy   []float64 // centred Xᵀy
	yy   float64   // centred yᵀy
	// lprior[k] is log p(γ) of every model of k terms.
	lprior []float64
}

// New returns the posterior of response y on the rows x (n × p).
func New(x [][]float64, y []float64) *GPrior {
	n, p := len(y), len(x[0])
	c := make([][]float64, p)
	for j := range p {
		c[j] = make([]float64, n)
		var m float64
		for i := range n {
			m += x[i][j]
		}
		m /= float64(n)
		for i := range n {
			c[j][i] = x[i][j] - m
		}
	}
	var my float64
	for _, v := range y {
		my += v
	}
	my /= float64(n)
	yc := make([]float64, n)
	for i, v := range y {
		yc[i] = v - my
	}
	dot := func(a, b []float64) (s float64) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	g := &GPrior{n: n, p: p, g: float64(n), xx: make([]float64, p*p), xy: make([]float64, p), yy: dot(yc, yc)}
	for a := range p {
		g.xy[a] = dot(c[a], yc)
		for b := a; b < p; b++ {
			v := dot(c[a], c[b])
			g.xx[a*p+b], g.xx[b*p+a] = v, v
		}
	}
	g.lprior = make([]float64, p+1)
	for k := range g.lprior {
		g.lprior[k] = -math.Log(float64(p+1)) - lchoose(p, k)
	}
	return g
}

// logPost is log p(γ) + log p(y | γ) up to a constant, −Inf off the
// support. L and v are scratch of at least k² and k.
func (g *GPrior) logPost(active []int, L, v []float64) float64 {
	k := len(active)
	if k > g.n-2 {
		return math.Inf(-1)
	}
	lp := g.lprior[k]
	if k == 0 {
		return lp
	}
	p := g.p
	// Cholesky of X_γᵀX_γ, then R² = |L⁻¹ X_γᵀy|² / yᵀy.
	for a := range k {
		row := g.xx[active[a]*p:]
		for b := 0; b <= a; b++ {
			s := row[active[b]]
			for c := range b {
				s -= L[a*k+c] * L[b*k+c]
			}
			if a == b {
				if !(s > 1e-10*row[active[a]]) {
					return math.Inf(-1) // collinear: no g-prior
				}
				L[a*k+a] = math.Sqrt(s)
			} else {
				L[a*k+b] = s / L[b*k+b]
			}
		}
	}
	var q float64
	for a := range k {
		s := g.xy[active[a]]
		for c := range a {
			s -= L[a*k+c] * v[c]
		}
		v[a] = s / L[a*k+a]
		q += v[a] * v[a]
	}
	r2 := q / g.yy
	n1 := float64(g.n - 1)
	return lp + (n1-float64(k))/2*math.Log1p(g.g) - n1/2*math.Log1p(g.g*(1-r2))
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// P returns the number of terms.
func (g *GPrior) P() int { return g.p }

// Chain runs one chain of add/drop/swap Metropolis–Hastings on the models
// from the empty model, burn steps then steps kept, and returns each
// term's visit frequency over the kept steps in batches: freq[b][j] is
// term j's frequency in batch b.
func (g *GPrior) Chain(seed uint64, chain, burn, steps, batches int) [][]float64 {
	r := rand.New(rand.NewPCG(seed, uint64(chain)))
	in := make([]bool, g.p)
	var active []int
	L := make([]float64, g.p*g.p/64+64)
	v := make([]float64, g.p)
	cur := g.logPost(active, L, v)
	per := steps / batches
	freq := make([][]float64, batches)
	for b := range freq {
		freq[b] = make([]float64, g.p)
	}
	// since[j] is the kept step term j last entered the model; a term's
	// count is added on leaving (or at a batch's end), not per step.
	since := make([]int, g.p)
	prop := make([]int, 0, g.p)
	flush := func(b, at int) {
		for _, a := range active {
			freq[b][a] += float64(at - since[a])
			since[a] = at
		}
	}
	for it := range burn + steps {
		kept := it - burn
		if kept >= 0 && kept%per == 0 {
			if kept > 0 {
				flush(kept/per-1, kept)
			}
			for _, a := range active {
				since[a] = kept
			}
		}
		prop = append(prop[:0], active...)
		k := len(active)
		swap := r.Float64() < 0.5
		if swap && (k == 0 || k == g.p) {
			// No swap exists: the step stays, so that every move keeps
			// its probability and the proposal stays symmetric.
			continue
		}
		if swap {
			out := r.IntN(k)
			j := r.IntN(g.p)
			for in[j] {
				j = r.IntN(g.p)
			}
			prop[out] = j
		} else {
			j := r.IntN(g.p)
			if in[j] {
				prop = slices.DeleteFunc(prop, func(a int) bool { return a == j })
			} else {
				prop = append(prop, j)
			}
		}
		slices.Sort(prop)
		if len(prop)*len(prop) > len(L) {
			L = make([]float64, 2*len(prop)*len(prop))
		}
		// Both kinds are symmetric proposals: add/drop flips a uniform
		// term, a swap pairs a uniform active with a uniform inactive term
		// (the reverse has the same size, so the same probability).
		next := g.logPost(prop, L, v)
		if math.Log(r.Float64()) < next-cur {
			b := max(kept, 0) / per
			for _, a := range active {
				if kept > 0 {
					freq[min(b, batches-1)][a] += float64(kept - since[a])
				}
				in[a] = false
			}
			active = append(active[:0], prop...)
			for _, a := range active {
				in[a] = true
				since[a] = max(kept, 0)
			}
			cur = next
		}
	}
	flush(batches-1, steps)
	for b := range freq {
		for j := range freq[b] {
			freq[b][j] /= float64(per)
		}
	}
	return freq
}
