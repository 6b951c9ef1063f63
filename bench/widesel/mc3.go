package main

import (
	"math"
	"math/rand/v2"
	"slices"
)

// gprior is the closed-form posterior of the Gaussian regression under
// Zellner's g-prior on the centred predictors (flat intercept,
// p(σ²) ∝ 1/σ²) with a beta-binomial(1, 1) model prior, written here
// independently of trj's models/glmselect:
//
//	log p(y | γ) − log p(y | ∅) = ((n−1−k)/2) log(1+g) − ((n−1)/2) log(1 + g(1 − R²_γ)),
//
// supported on models of at most n − 2 terms whose centred columns are
// linearly independent.
type gprior struct {
	n, p int
	g    float64
	xx   [][]float64 // centred Gram matrix
	xy   []float64   // centred Xᵀy
	yy   float64     // centred yᵀy
}

func newGPrior(x [][]float64, y []float64) *gprior {
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
	g := &gprior{n: n, p: p, g: float64(n), xx: make([][]float64, p), xy: make([]float64, p), yy: dot(yc, yc)}
	for a := range p {
		g.xx[a] = make([]float64, p)
		g.xy[a] = dot(c[a], yc)
		for b := range p {
			g.xx[a][b] = dot(c[a], c[b])
		}
	}
	return g
}

// logPost is log p(γ) + log p(y | γ) up to a constant, −Inf off the
// support.
func (g *gprior) logPost(active []int) float64 {
	k := len(active)
	if k > g.n-2 {
		return math.Inf(-1)
	}
	lp := -math.Log(float64(g.p+1)) - lchoose(g.p, k)
	if k == 0 {
		return lp
	}
	// Cholesky of X_γᵀX_γ, then R² = |L⁻¹ X_γᵀy|² / yᵀy.
	L := make([]float64, k*k)
	for a := range k {
		for b := 0; b <= a; b++ {
			s := g.xx[active[a]][active[b]]
			for c := range b {
				s -= L[a*k+c] * L[b*k+c]
			}
			if a == b {
				if s <= 1e-10*g.xx[active[a]][active[a]] {
					return math.Inf(-1) // collinear: no g-prior
				}
				L[a*k+a] = math.Sqrt(s)
			} else {
				L[a*k+b] = s / L[b*k+b]
			}
		}
	}
	var q float64
	v := make([]float64, k)
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

// mc3 runs one chain of add/drop/swap Metropolis–Hastings on the models
// for steps steps after burn, and returns each term's visit frequency.
func (g *gprior) mc3(seed uint64, chain, burn, steps int) []float64 {
	r := rand.New(rand.NewPCG(seed, uint64(chain)))
	in := make([]bool, g.p)
	var active []int
	cur := g.logPost(active)
	counts := make([]float64, g.p)
	prop := make([]int, 0, g.p)
	for it := range burn + steps {
		prop = append(prop[:0], active...)
		k := len(active)
		swap := r.Float64() < 0.5
		if swap && (k == 0 || k == g.p) {
			// No swap exists: the step stays, so that every move keeps
			// its probability and the proposal stays symmetric.
		} else if swap {
			out := r.IntN(k)
			j := r.IntN(g.p)
			for in[j] {
				j = r.IntN(g.p)
			}
			prop[out] = j
			slices.Sort(prop)
		} else {
			j := r.IntN(g.p)
			if in[j] {
				prop = slices.DeleteFunc(prop, func(a int) bool { return a == j })
			} else {
				prop = append(prop, j)
				slices.Sort(prop)
			}
		}
		// Both kinds are symmetric proposals: add/drop flips a uniform
		// term, a swap pairs a uniform active with a uniform inactive term
		// (the reverse has the same size, so the same probability).
		next := g.logPost(prop)
		if swap && (k == 0 || k == g.p) {
			next = math.Inf(-1)
		}
		if math.Log(r.Float64()) < next-cur {
			for _, a := range active {
				in[a] = false
			}
			active = append(active[:0], prop...)
			for _, a := range active {
				in[a] = true
			}
			cur = next
		}
		if it >= burn {
			for _, a := range active {
				counts[a]++
			}
		}
	}
	for j := range counts {
		counts[j] /= float64(steps)
	}
	return counts
}
