package flows

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/trjgo/trj/internal/rqspline"
)

// stack is F: a sequence of [reverse permutation, masked autoregressive
// rational-quadratic spline] layers on [0, 1]^n, each conditioned by a MADE
// with two ReLU hidden layers and an optional context that feeds every hidden
// unit without a mask. It holds only the shape; parameters live in one flat
// slice so that Adam, save/load and finite-difference checks see one vector.
type stack struct {
	n, hidden, bins, ctx, layers int

	per  int // spline parameters per coordinate, 3·bins+1
	out  int // MADE outputs, n·per
	size int // parameters per layer

	// Offsets of each block within a layer's parameters.
	oW1, oB1, oW2, oB2, oW3, oB3, oC1, oC2 int

	// Autoregressive masks (1 keeps a weight), shared by all layers because
	// the ordering is reset by the explicit permutation between layers.
	m1, m2, m3 []float64
	// start[d] is the first hidden unit of degree ≥ d (units are sorted by
	// degree).
	start []int

	// scale divides the width and height logits, as nflows does, so that a
	// freshly initialised spline is close to uniform bins.
	scale float64
}

func newStack(n, hidden, bins, ctx, layers int) *stack {
	s := &stack{n: n, hidden: hidden, bins: bins, ctx: ctx, layers: layers}
	s.per = rqspline.NumParams(bins)
	s.out = n * s.per
	h := hidden
	o := 0
	next := func(sz int) int { r := o; o += sz; return r }
	s.oW1 = next(h * n)
	s.oB1 = next(h)
	s.oW2 = next(h * h)
	s.oB2 = next(h)
	s.oW3 = next(s.out * h)
	s.oB3 = next(s.out)
	s.oC1 = next(h * ctx)
	s.oC2 = next(h * ctx)
	s.size = o
	s.scale = 1 / math.Sqrt(float64(h))

	// Degrees: input i has degree i+1; hidden units take degrees 1..n−1 in
	// contiguous, nearly equal blocks (all 0 when n = 1, so the first
	// coordinate's spline depends on the context and biases only); output
	// block i has degree i+1. Sorting the hidden units by degree makes every
	// mask block-triangular, so the products below skip the masked half.
	deg := make([]int, h)
	for j := range deg {
		if n > 1 {
			deg[j] = j*(n-1)/h + 1
		}
	}
	// start[d] is the first hidden unit of degree ≥ d: units of degree ≤ d
	// are [0, start[d+1]), units of degree d are [start[d], start[d+1]).
	s.start = make([]int, n+2)
	for d := range s.start {
		s.start[d] = sort.SearchInts(deg, d)
	}
	s.m1 = make([]float64, h*n)
	for j := 0; j < h; j++ {
		for i := 0; i < n; i++ {
			if i+1 <= deg[j] {
				s.m1[j*n+i] = 1
			}
		}
	}
	s.m2 = make([]float64, h*h)
	for j := 0; j < h; j++ {
		for i := 0; i < h; i++ {
			if deg[i] <= deg[j] {
				s.m2[j*h+i] = 1
			}
		}
	}
	s.m3 = make([]float64, s.out*h)
	for q := 0; q < s.out; q++ {
		d := q/s.per + 1
		for j := 0; j < h; j++ {
			if deg[j] < d {
				s.m3[q*h+j] = 1
			}
		}
	}
	return s
}

// numParams is the length of the flat parameter vector.
func (s *stack) numParams() int { return s.layers * s.size }

// init fills p with PyTorch's default linear initialisation,
// U(−1/√fan_in, 1/√fan_in), with masked weights exactly zero.
func (s *stack) init(p []float64, rng *rand.Rand) {
	for l := 0; l < s.layers; l++ {
		q := p[l*s.size : (l+1)*s.size]
		fill := func(dst, mask []float64, fanIn int) {
			b := 1 / math.Sqrt(float64(fanIn))
			for i := range dst {
				v := b * (2*rng.Float64() - 1)
				if mask != nil {
					v *= mask[i]
				}
				dst[i] = v
			}
		}
		h := s.hidden
		fill(q[s.oW1:s.oB1], s.m1, s.n+s.ctx)
		fill(q[s.oB1:s.oW2], nil, s.n+s.ctx)
		fill(q[s.oW2:s.oB2], s.m2, h+s.ctx)
		fill(q[s.oB2:s.oW3], nil, h+s.ctx)
		fill(q[s.oW3:s.oB3], s.m3, h)
		fill(q[s.oB3:s.oC1], nil, h)
		fill(q[s.oC1:s.oC2], nil, s.n+s.ctx)
		fill(q[s.oC2:s.size], nil, h+s.ctx)
	}
}

// freeSpans returns the index ranges [lo, hi) of the parameters that are
// not masked, shifted by offset, merging neighbours. Training touches only
// these: the masked half of the hidden-to-hidden and output weights never
// changes, and skipping it halves the optimiser's memory traffic.
func (s *stack) freeSpans(offset int) [][2]int {
	var sp [][2]int
	add := func(lo, hi int) {
		if lo >= hi {
			return
		}
		lo, hi = lo+offset, hi+offset
		if k := len(sp); k > 0 && sp[k-1][1] == lo {
			sp[k-1][1] = hi
			return
		}
		sp = append(sp, [2]int{lo, hi})
	}
	h := s.hidden
	for l := 0; l < s.layers; l++ {
		b := l * s.size
		add(b+s.oW1, b+s.oW2) // input weights (masked by maskGrad) and biases
		for d := 0; d < len(s.start)-1; d++ {
			for j := s.start[d]; j < s.start[d+1]; j++ {
				add(b+s.oW2+j*h, b+s.oW2+j*h+s.start[d+1])
			}
		}
		add(b+s.oB2, b+s.oW3)
		for q := 0; q < s.out; q++ {
			add(b+s.oW3+q*h, b+s.oW3+q*h+s.start[q/s.per+1])
		}
		add(b+s.oB3, b+s.size) // output biases and context weights
	}
	return sp
}

// maskAll zeroes every masked weight of p.
func (s *stack) maskAll(p []float64) {
	for l := 0; l < s.layers; l++ {
		q := p[l*s.size : (l+1)*s.size]
		mul(q[s.oW1:s.oB1], s.m1)
		mul(q[s.oW2:s.oB2], s.m2)
		mul(q[s.oW3:s.oB3], s.m3)
	}
}

// masksRespected reports whether every masked weight of p is zero, which the
// autoregressive structure (and so the exactness of the inverse) requires.
func (s *stack) masksRespected(p []float64) bool {
	for l := 0; l < s.layers; l++ {
		q := p[l*s.size : (l+1)*s.size]
		for _, pr := range [][2][]float64{{q[s.oW1:s.oB1], s.m1}, {q[s.oW2:s.oB2], s.m2}, {q[s.oW3:s.oB3], s.m3}} {
			for i, v := range pr[0] {
				if pr[1][i] == 0 && v != 0 {
					return false
				}
			}
		}
	}
	return true
}

func mul(dst, m []float64) {
	for i := range dst {
		dst[i] *= m[i]
	}
}

// sub is the rows×cols block at (r0, c0) of a row-major matrix with the
// given stride.
func sub(d []float64, stride, r0, c0, rows, cols int) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: stride, Data: d[r0*stride+c0:]}
}

func vec(d []float64) blas64.Vector { return blas64.Vector{N: len(d), Inc: 1, Data: d} }

func (s *stack) scaleLogits(o []float64) {
	k := s.bins
	for b := 0; b < len(o); b += s.per {
		for j := b; j < b+2*k; j++ {
			o[j] *= s.scale
		}
	}
}

func relu(v []float64) {
	for i, x := range v {
		if x < 0 {
			v[i] = 0
		}
	}
}

// spline splits one coordinate's parameters into widths, heights and
// derivatives.
func (s *stack) spline(o []float64, i int) (uw, uh, ud []float64) {
	b := o[i*s.per : (i+1)*s.per]
	k := s.bins
	return b[:k], b[k : 2*k], b[2*k:]
}

func reverseInto(dst, src []float64) {
	n := len(src)
	for i := range src {
		dst[n-1-i] = src[i]
	}
}

// pointWork is the scratch for single-point passes; one per flow value, so a
// flow must be cloned for use from another goroutine.
type pointWork struct {
	a, b, h1, h2, o []float64
}

func (s *stack) newPointWork() *pointWork {
	return &pointWork{
		a:  make([]float64, s.n),
		b:  make([]float64, s.n),
		h1: make([]float64, s.hidden),
		h2: make([]float64, s.hidden),
		o:  make([]float64, s.out),
	}
}
