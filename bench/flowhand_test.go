package bench

// This file is a frozen copy of the hand-written RQMA flow that package
// flows used before its flows became gorgonia graphs compiled by ad (MADE
// and spline forward passes, their hand-written reverse mode, and the Adam
// trainer). Its settings are flows' own types, and the data checks, the
// schedule, the split, minibatches, Adam and early stopping are flows'
// (internal/training), so the two differ only in how they evaluate the flow
// and its gradient. BenchmarkFlowTrain and BenchmarkFlowEval measure the graph path
// against it, as BenchmarkGradient keeps "hand". Identifiers carry a
// "hand" prefix; nothing outside the benchmarks uses it.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/rqspline"
	"github.com/trjgo/trj/internal/scalar"
	"github.com/trjgo/trj/internal/training"
)

// handStack is F: a sequence of [reverse permutation, masked autoregressive
// rational-quadratic spline] layers on [0, 1]^n, each conditioned by a MADE
// with two ReLU hidden layers and an optional context that feeds every hidden
// unit without a mask. It holds only the shape; parameters live in one flat
// slice so that Adam, save/load and handFinite-difference checks see one vector.
type handStack struct {
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

	// wide reports whether the hidden units form a single degree block
	// (n ≤ 2). Then the hidden-to-hidden and output products of a batch
	// pass run on transposed weights: gonum's row-update kernel does long
	// (h- or per-wide) updates and skips the zero (ReLU) entries of the
	// activations, which beats its dot-product kernel. With many narrow
	// degree blocks the updates would be short and the per-minibatch
	// transposes of the large weight matrices would not pay, so the
	// products use the dot-product layout.
	wide bool
}

func handNewStack(n, hidden, bins, ctx, layers int) *handStack {
	s := &handStack{n: n, hidden: hidden, bins: bins, ctx: ctx, layers: layers}
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
	blocks := 0
	for d := 0; d+1 < len(s.start); d++ {
		if s.start[d] < s.start[d+1] {
			blocks++
		}
	}
	s.wide = blocks <= 1
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
func (s *handStack) numParams() int { return s.layers * s.size }

// init fills p with PyTorch's default linear initialisation,
// U(−1/√fan_in, 1/√fan_in), with masked weights exactly zero.
func (s *handStack) init(p []float64, rng *rand.Rand) {
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

// maskGrad zeroes the gradient of masked weights so they stay zero. Only the
// input weights need it: the block products of backwardBatch never write the
// masked entries of the other two weight matrices.
func (s *handStack) maskGrad(g []float64) {
	for l := 0; l < s.layers; l++ {
		q := g[l*s.size : (l+1)*s.size]
		handMul(q[s.oW1:s.oB1], s.m1)
	}
}

// freeSpans returns the index ranges [lo, hi) of the parameters that are
// not masked, shifted by offset, merging neighbours. Training touches only
// these: the masked half of the hidden-to-hidden and output weights never
// changes, and skipping it halves the optimiser's memory traffic.
func (s *handStack) freeSpans(offset int) [][2]int {
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

func handMul(dst, m []float64) {
	for i := range dst {
		dst[i] *= m[i]
	}
}

func handGen(rows, cols int, d []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: d[:rows*cols]}
}

// handSub is the rows×cols block at (r0, c0) of a row-major matrix with the
// given stride.
func handSub(d []float64, stride, r0, c0, rows, cols int) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: stride, Data: d[r0*stride+c0:]}
}

func handVec(d []float64) blas64.Vector { return blas64.Vector{N: len(d), Inc: 1, Data: d} }

// handBatchWork is one goroutine's scratch for a minibatch pass of the handStack.
type handBatchWork struct {
	rows int
	// Per layer: input (after the permutation), hidden activations and
	// spline parameters; plus the handStack's output.
	x, h1, h2, o  [][]float64
	y             []float64
	gx, gy        []float64
	gh1, gh2, go_ []float64
	// Per layer: the transposed weights, set by transposeWeights once per
	// minibatch; and scratch for transposed weight gradients.
	wt [][]float64
	gt []float64
	// Per layer and (row, coordinate): the spline knots, kept from the
	// forward pass for the backward pass.
	kn [][]*rqspline.Knots
}

func (s *handStack) newBatchWork(rows int) *handBatchWork {
	w := &handBatchWork{rows: rows}
	for l := 0; l < s.layers; l++ {
		w.x = append(w.x, make([]float64, rows*s.n))
		w.h1 = append(w.h1, make([]float64, rows*s.hidden))
		w.h2 = append(w.h2, make([]float64, rows*s.hidden))
		w.o = append(w.o, make([]float64, rows*s.out))
		kn := make([]*rqspline.Knots, rows*s.n)
		for i := range kn {
			kn[i] = rqspline.NewKnots(s.bins)
		}
		w.kn = append(w.kn, kn)
	}
	w.y = make([]float64, rows*s.n)
	w.gx = make([]float64, rows*s.n)
	w.gy = make([]float64, rows*s.n)
	w.gh1 = make([]float64, rows*s.hidden)
	w.gh2 = make([]float64, rows*s.hidden)
	w.go_ = make([]float64, rows*s.out)
	for l := 0; l < s.layers; l++ {
		w.wt = append(w.wt, make([]float64, s.transposedLen()))
	}
	w.gt = make([]float64, s.hidden*max(s.n, s.ctx))
	return w
}

// mlp computes the hidden layers and spline parameters of one layer for
// rows of x (B×n) and ctx (B×ctx, nil without context). wt holds the
// layer's transposed weights (see transposeWeights).
func (s *handStack) mlp(q []float64, rows int, x, ctx, h1, h2, o, wt []float64) {
	n, h := s.n, s.hidden
	// The input and context products always run on transposed copies of
	// those (small) weights, so that gonum does h-long row updates instead
	// of n- or ctx-long dot products; the other two use them when s.wide.
	w1t, w2t, w3t, c1t, c2t := s.transposedParts(wt)
	for r := 0; r < rows; r++ {
		copy(h1[r*h:(r+1)*h], q[s.oB1:s.oW2])
		copy(h2[r*h:(r+1)*h], q[s.oB2:s.oW3])
		copy(o[r*s.out:(r+1)*s.out], q[s.oB3:s.oC1])
	}
	H1 := handGen(rows, h, h1)
	H2 := handGen(rows, h, h2)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, handGen(rows, n, x), handGen(n, h, w1t), 1, H1)
	if s.ctx > 0 {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, handGen(rows, s.ctx, ctx), handGen(s.ctx, h, c1t), 1, H1)
	}
	handRelu(h1[:rows*h])
	for d := 0; d < len(s.start)-1; d++ {
		a, b := s.start[d], s.start[d+1]
		if a == b {
			continue
		}
		if s.wide {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, handSub(h1, h, 0, 0, rows, b), handSub(w2t, h, 0, a, b, b-a), 1, handSub(h2, h, 0, a, rows, b-a))
		} else {
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, handSub(h1, h, 0, 0, rows, b), handSub(q[s.oW2:], h, a, 0, b-a, b), 1, handSub(h2, h, 0, a, rows, b-a))
		}
	}
	if s.ctx > 0 {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, handGen(rows, s.ctx, ctx), handGen(s.ctx, h, c2t), 1, H2)
	}
	handRelu(h2[:rows*h])
	for i := 0; i < n; i++ {
		if p := s.start[i+1]; p > 0 {
			if s.wide {
				blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, handSub(h2, h, 0, 0, rows, p), handSub(w3t, s.out, 0, i*s.per, p, s.per), 1, handSub(o, s.out, 0, i*s.per, rows, s.per))
			} else {
				blas64.Gemm(blas.NoTrans, blas.Trans, 1, handSub(h2, h, 0, 0, rows, p), handSub(q[s.oW3:], h, i*s.per, 0, s.per, p), 1, handSub(o, s.out, 0, i*s.per, rows, s.per))
			}
		}
	}
	s.scaleLogits(o[:rows*s.out])
}

// transposedLen is the length of one layer's transposed-weight buffer.
func (s *handStack) transposedLen() int {
	h := s.hidden
	return h*s.n + s.wideLen() + 2*h*s.ctx
}

// wideLen is the room for the transposed hidden and output weights, which
// only a wide handStack uses.
func (s *handStack) wideLen() int {
	if !s.wide {
		return 0
	}
	return s.hidden * (s.hidden + s.out)
}

// transposedParts splits a layer's transposed-weight buffer into the
// transposes of its input (n×h), hidden (h×h) and output (h×out) weights,
// the latter two nil unless s.wide, and context (ctx×h, twice) weights.
func (s *handStack) transposedParts(wt []float64) (w1t, w2t, w3t, c1t, c2t []float64) {
	h := s.hidden
	o := 0
	next := func(sz int) []float64 { r := wt[o : o+sz]; o += sz; return r }
	w1t = next(h * s.n)
	if s.wide {
		w2t = next(h * h)
		w3t = next(h * s.out)
	}
	c1t = next(h * s.ctx)
	c2t = next(h * s.ctx)
	return
}

// transposeWeights stores the transposes of every layer's weights of p in
// w. It must run before forwardBatch whenever p has changed; workers call it
// once per minibatch, not once per chunk.
func (s *handStack) transposeWeights(p []float64, w *handBatchWork) {
	h := s.hidden
	for l := 0; l < s.layers; l++ {
		q := p[l*s.size : (l+1)*s.size]
		w1t, w2t, w3t, c1t, c2t := s.transposedParts(w.wt[l])
		// Masked entries are zero in q and so in the copies.
		handTranspose(w1t, q[s.oW1:s.oB1], h, s.n)
		if s.wide {
			handTranspose(w2t, q[s.oW2:s.oB2], h, h)
			handTranspose(w3t, q[s.oW3:s.oB3], s.out, h)
		}
		if s.ctx > 0 {
			handTranspose(c1t, q[s.oC1:s.oC2], h, s.ctx)
			handTranspose(c2t, q[s.oC2:s.size], h, s.ctx)
		}
	}
}

// handTranspose sets dst (cols×rows) to the handTranspose of src (rows×cols), both
// row-major.
func handTranspose(dst, src []float64, rows, cols int) {
	for i := 0; i < rows; i++ {
		row := src[i*cols : (i+1)*cols]
		for j, v := range row {
			dst[j*rows+i] = v
		}
	}
}

func (s *handStack) scaleLogits(o []float64) {
	k := s.bins
	for b := 0; b < len(o); b += s.per {
		for j := b; j < b+2*k; j++ {
			o[j] *= s.scale
		}
	}
}

func handRelu(v []float64) {
	for i, x := range v {
		if x < 0 {
			v[i] = 0
		}
	}
}

// spline splits one coordinate's parameters into widths, heights and
// derivatives.
func (s *handStack) spline(o []float64, i int) (uw, uh, ud []float64) {
	b := o[i*s.per : (i+1)*s.per]
	k := s.bins
	return b[:k], b[k : 2*k], b[2*k:]
}

// forwardBatch runs the handStack on rows of u (B×n, in [0,1]) and writes the
// output to w.y and the per-row sum of spline log-derivatives into ld.
// transposeWeights(p, w) must have run since p last changed.
func (s *handStack) forwardBatch(p []float64, w *handBatchWork, rows int, u, ctx, ld []float64) {
	n := s.n
	for r := 0; r < rows; r++ {
		ld[r] = 0
	}
	in := u
	for l := 0; l < s.layers; l++ {
		q := p[l*s.size : (l+1)*s.size]
		x := w.x[l]
		for r := 0; r < rows; r++ {
			handReverseInto(x[r*n:(r+1)*n], in[r*n:(r+1)*n])
		}
		s.mlp(q, s.mlpRows(rows), x, ctx, w.h1[l], w.h2[l], w.o[l], w.wt[l])
		o := w.o[l]
		kn := w.kn[l]
		for r := 0; r < rows; r++ {
			mr := s.mlpRow(r)
			or := o[mr*s.out:]
			for i := 0; i < n; i++ {
				kr := s.knotRow(r, i)
				if kr == r {
					uw, uh, ud := s.spline(or, i)
					kn[kr*n+i].Set(uw, uh, ud)
				}
				y, d := kn[kr*n+i].Forward(x[r*n+i])
				w.y[r*n+i] = y
				ld[r] += d
			}
		}
		in = w.y // the next layer permutes this layer's output
	}
}

// constant reports whether the conditioner's output is the same for every
// row: with one coordinate and no context the autoregressive masks cut the
// input off, so one MLP pass serves the whole batch.
func (s *handStack) constant() bool { return s.n == 1 && s.ctx == 0 }

func (s *handStack) mlpRows(rows int) int {
	if s.constant() {
		return 1
	}
	return rows
}

func (s *handStack) mlpRow(r int) int {
	if s.constant() {
		return 0
	}
	return r
}

// knotRow returns the row whose spline knots serve coordinate i of row r.
// A coordinate fed by no hidden unit (the first one, whenever n > 1) has
// spline parameters equal to its output biases in every row, context or
// not, so its knots (softmaxes and softplus, a large share of a pass) are
// computed once per batch, for row 0.
func (s *handStack) knotRow(r, i int) int {
	if s.start[i+1] == 0 {
		return 0
	}
	return s.mlpRow(r)
}

func handReverseInto(dst, src []float64) {
	n := len(src)
	for i := range src {
		dst[n-1-i] = src[i]
	}
}

// backwardBatch adds to g the gradient of Σ_r [gy_r·y_r + gl_r·ld_r] with
// respect to the handStack parameters, where gy (B×n) is the upstream gradient of
// the output (overwritten) and gl the per-row weight of the log-determinant.
// forwardBatch must have run on the same rows, with the same context rows ctx
// (B×ctx; nil without context).
func (s *handStack) backwardBatch(p, g []float64, w *handBatchWork, rows int, gy, gl, ctx []float64) {
	n, h := s.n, s.hidden
	for l := s.layers - 1; l >= 0; l-- {
		q := p[l*s.size : (l+1)*s.size]
		gq := g[l*s.size : (l+1)*s.size]
		x := w.x[l]
		gx, gO := w.gx, w.go_
		mrows := s.mlpRows(rows)
		for i := range gO[:mrows*s.out] {
			gO[i] = 0
		}
		kn := w.kn[l]
		for r := 0; r < rows; r++ {
			mr := s.mlpRow(r)
			gor := gO[mr*s.out:]
			for i := 0; i < n; i++ {
				guw, guh, gud := s.spline(gor, i)
				gx[r*n+i] = kn[s.knotRow(r, i)*n+i].ForwardVJP(x[r*n+i], gy[r*n+i], gl[r], guw, guh, gud)
			}
		}
		s.scaleLogits(gO[:mrows*s.out])
		h1l, h2l := w.h1[l], w.h2[l]
		GH1 := handGen(mrows, h, w.gh1)
		GH2 := handGen(mrows, h, w.gh2)
		// Output layer, coordinate by coordinate over the unmasked prefix.
		for i := range w.gh2[:mrows*h] {
			w.gh2[i] = 0
		}
		for i := 0; i < n; i++ {
			p := s.start[i+1]
			if p == 0 {
				continue
			}
			goi := handSub(gO, s.out, 0, i*s.per, mrows, s.per)
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, goi, handSub(h2l, h, 0, 0, mrows, p), 1, handSub(gq[s.oW3:], h, i*s.per, 0, s.per, p))
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, goi, handSub(q[s.oW3:], h, i*s.per, 0, s.per, p), 1, handSub(w.gh2, h, 0, 0, mrows, p))
		}
		handColSum(gq[s.oB3:s.oC1], gO, mrows, s.out)
		handReluGradSum(w.gh2, h2l, gq[s.oB2:s.oW3], mrows, h)
		// Second hidden layer, degree block by degree block.
		for i := range w.gh1[:mrows*h] {
			w.gh1[i] = 0
		}
		for d := 0; d < len(s.start)-1; d++ {
			a, b := s.start[d], s.start[d+1]
			if a == b {
				continue
			}
			gh2d := handSub(w.gh2, h, 0, a, mrows, b-a)
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, gh2d, handSub(h1l, h, 0, 0, mrows, b), 1, handSub(gq[s.oW2:], h, a, 0, b-a, b))
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, gh2d, handSub(q[s.oW2:], h, a, 0, b-a, b), 1, handSub(w.gh1, h, 0, 0, mrows, b))
		}
		handReluGradSum(w.gh1, h1l, gq[s.oB1:s.oW2], mrows, h)
		// First hidden layer. Its weight gradients are formed transposed,
		// Xᵀ·GH1, so that gonum runs h-long rather than n-long (or
		// ctx-long) row updates, and then added in.
		if !s.constant() { // else the input weights are all masked
			s.addTransposedGrad(gq[s.oW1:s.oB1], x, GH1, mrows, n, w.gt)
		}
		if s.ctx > 0 {
			s.addTransposedGrad(gq[s.oC1:s.oC2], ctx, GH1, mrows, s.ctx, w.gt)
			s.addTransposedGrad(gq[s.oC2:s.size], ctx, GH2, mrows, s.ctx, w.gt)
		}
		if l == 0 {
			break // the handStack's input carries no parameters
		}
		if !s.constant() { // else the masked input weights are all zero
			// gx = GH1·W1 as h-long dot products with the rows of W1ᵀ.
			w1t := w.wt[l][:n*h]
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, GH1, handGen(n, h, w1t), 1, handGen(rows, n, gx))
		}
		// Undo the permutation: the gradient of the previous layer's output.
		for r := 0; r < rows; r++ {
			handReverseInto(gy[r*n:(r+1)*n], gx[r*n:(r+1)*n])
		}
	}
}

// addTransposedGrad adds Gᵀ·A (h×m) to dst, where A is rows×m and G
// rows×h, by computing Aᵀ·G into scratch and adding its handTranspose: gonum
// then runs h-long row updates, one per entry of the narrow A, instead of
// m-long ones per entry of G.
func (s *handStack) addTransposedGrad(dst, a []float64, g blas64.General, rows, m int, scratch []float64) {
	h := s.hidden
	t := scratch[:m*h]
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, handGen(rows, m, a), g, 0, handGen(m, h, t))
	for j := 0; j < m; j++ {
		row := t[j*h : (j+1)*h]
		for i, v := range row {
			dst[i*m+j] += v
		}
	}
}

func handColSum(dst, m []float64, rows, cols int) {
	for r := 0; r < rows; r++ {
		row := m[r*cols : (r+1)*cols]
		for j, v := range row {
			dst[j] += v
		}
	}
}

// handReluGradSum zeroes the entries of the rows×cols gradient g whose ReLU
// activation act was not positive and adds the column sums of the result
// (the bias gradient) to dst, in one pass.
func handReluGradSum(g, act, dst []float64, rows, cols int) {
	for r := 0; r < rows; r++ {
		gr := g[r*cols : (r+1)*cols]
		ar := act[r*cols : (r+1)*cols]
		d := dst[:cols]
		for j, a := range ar {
			if a <= 0 {
				gr[j] = 0
			} else {
				d[j] += gr[j]
			}
		}
	}
}

// handPointWork is the scratch for single-point passes; one per flow value, so a
// flow must be cloned for use from another goroutine.
type handPointWork struct {
	a, b, h1, h2, o []float64
}

func (s *handStack) newPointWork() *handPointWork {
	return &handPointWork{
		a:  make([]float64, s.n),
		b:  make([]float64, s.n),
		h1: make([]float64, s.hidden),
		h2: make([]float64, s.hidden),
		o:  make([]float64, s.out),
	}
}

// hidden computes both hidden layers for one point.
func (s *handStack) hiddenPoint(q, x, ctx []float64, w *handPointWork) {
	h, n := s.hidden, s.n
	copy(w.h1, q[s.oB1:s.oW2])
	blas64.Gemv(blas.NoTrans, 1, handGen(h, n, q[s.oW1:]), handVec(x), 1, handVec(w.h1))
	if s.ctx > 0 {
		blas64.Gemv(blas.NoTrans, 1, handGen(h, s.ctx, q[s.oC1:]), handVec(ctx), 1, handVec(w.h1))
	}
	handRelu(w.h1)
	copy(w.h2, q[s.oB2:s.oW3])
	for d := 0; d < len(s.start)-1; d++ {
		a, b := s.start[d], s.start[d+1]
		if a < b {
			blas64.Gemv(blas.NoTrans, 1, handSub(q[s.oW2:], h, a, 0, b-a, b), handVec(w.h1[:b]), 1, handVec(w.h2[a:b]))
		}
	}
	if s.ctx > 0 {
		blas64.Gemv(blas.NoTrans, 1, handGen(h, s.ctx, q[s.oC2:]), handVec(ctx), 1, handVec(w.h2))
	}
	handRelu(w.h2)
}

// forwardPoint maps u ∈ [0,1]^n through the handStack in place and returns the
// sum of spline log-derivatives.
func (s *handStack) forwardPoint(p, u, ctx []float64, w *handPointWork) float64 {
	ld := 0.0
	for l := 0; l < s.layers; l++ {
		q := p[l*s.size : (l+1)*s.size]
		handReverseInto(w.a, u)
		s.hiddenPoint(q, w.a, ctx, w)
		copy(w.o, q[s.oB3:s.oC1])
		for i := 0; i < s.n; i++ {
			if p := s.start[i+1]; p > 0 {
				blas64.Gemv(blas.NoTrans, 1, handSub(q[s.oW3:], s.hidden, i*s.per, 0, s.per, p), handVec(w.h2[:p]), 1, handVec(w.o[i*s.per:(i+1)*s.per]))
			}
		}
		s.scaleLogits(w.o)
		for i := 0; i < s.n; i++ {
			uw, uh, ud := s.spline(w.o, i)
			y, d := rqspline.Forward(w.a[i], uw, uh, ud)
			u[i] = y
			ld += d
		}
	}
	return ld
}

// inversePoint inverts forwardPoint in place and returns the sum of the
// forward spline log-derivatives at the recovered points. Each layer is
// inverted coordinate by coordinate: coordinate i's spline depends only on
// hidden units of degree ≤ i, which depend only on the coordinates before i,
// so each step computes just the block of units of degree i and the whole
// inverse costs about one forward pass.
func (s *handStack) inversePoint(p, y, ctx []float64, w *handPointWork) float64 {
	ld := 0.0
	h, n := s.hidden, s.n
	for l := s.layers - 1; l >= 0; l-- {
		q := p[l*s.size : (l+1)*s.size]
		x := w.a
		for i := range x {
			x[i] = 0
		}
		for i := 0; i < n; i++ {
			if a, b := s.start[i], s.start[i+1]; a < b {
				h1, h2 := w.h1[a:b], w.h2[a:b]
				copy(h1, q[s.oB1+a:s.oB1+b])
				if i > 0 {
					blas64.Gemv(blas.NoTrans, 1, handSub(q[s.oW1:], n, a, 0, b-a, i), handVec(x[:i]), 1, handVec(h1))
				}
				if s.ctx > 0 {
					blas64.Gemv(blas.NoTrans, 1, handSub(q[s.oC1:], s.ctx, a, 0, b-a, s.ctx), handVec(ctx), 1, handVec(h1))
				}
				handRelu(h1)
				copy(h2, q[s.oB2+a:s.oB2+b])
				blas64.Gemv(blas.NoTrans, 1, handSub(q[s.oW2:], h, a, 0, b-a, b), handVec(w.h1[:b]), 1, handVec(h2))
				if s.ctx > 0 {
					blas64.Gemv(blas.NoTrans, 1, handSub(q[s.oC2:], s.ctx, a, 0, b-a, s.ctx), handVec(ctx), 1, handVec(h2))
				}
				handRelu(h2)
			}
			o := w.o[i*s.per : (i+1)*s.per]
			copy(o, q[s.oB3+i*s.per:s.oB3+(i+1)*s.per])
			if pr := s.start[i+1]; pr > 0 {
				blas64.Gemv(blas.NoTrans, 1, handSub(q[s.oW3:], h, i*s.per, 0, s.per, pr), handVec(w.h2[:pr]), 1, handVec(o))
			}
			s.scaleLogits(o)
			uw, uh, ud := s.spline(w.o, i)
			xi, d := rqspline.Inverse(y[i], uw, uh, ud)
			x[i] = xi
			ld += d
		}
		handReverseInto(y, x)
	}
	return ld
}

// errHandNonFinite is returned (wrapped) when a flow evaluation produces a NaN or
// infinite value, for example a point so far in the tails that the handSigmoid
// saturates to exactly 0 or 1. Samplers treat it as a rejected proposal.
var errHandNonFinite = errors.New("flows: non-handFinite value")

// handRQMA is the flow T = h⁻¹ ∘ F ∘ h ∘ s of the paper: s(θ) = b ⊙ (θ − a) a
// fixed handStandardisation, h an elementwise handSigmoid, and F a handStack of masked
// autoregressive rational-quadratic spline layers on [0, 1]^n. The reference
// is the standard normal. Forward (θ → z) is one handParallel pass, which is what
// training by maximum likelihood needs; Inverse is exact and takes n
// sequential passes per layer.
//
// An handRQMA keeps scratch space for single-point evaluations, so a value must
// not be used from several goroutines at once; use Clone.
type handRQMA struct {
	net    *handStack
	params []float64
	shift  []float64 // a
	scale  []float64 // b, reciprocal standard deviations
	c      float64
	work   *handPointWork
	buf    []float64
}

// handNewRQMA returns an untrained handRQMA flow on R^n, n = len(shift), with the
// handStandardisation s(θ) = scale ⊙ (θ − shift) and network weights initialised
// deterministically from seed. The benchmarks pass flows.PaperRQMAConfig
// and a standardisation from training.Standardisation, which flows has
// checked, so the copy does not check them again.
func handNewRQMA(shift, scale []float64, cfg flows.RQMAConfig, seed uint64) *handRQMA {
	n := len(shift)
	net := handNewStack(n, cfg.HiddenPerDim*n, cfg.Bins, 0, cfg.Layers)
	f := &handRQMA{
		net:    net,
		params: make([]float64, net.numParams()),
		shift:  slices.Clone(shift),
		scale:  slices.Clone(scale),
		c:      cmp.Or(cfg.SigmoidScale, 1),
		work:   net.newPointWork(),
		buf:    make([]float64, n),
	}
	net.init(f.params, rand.New(rand.NewPCG(seed, 0x5eed)))
	return f
}

// Dim returns the dimension n of the flow.
func (f *handRQMA) Dim() int { return f.net.n }

// Forward sets z = T(θ) and returns log|det J_T(θ)|.
func (f *handRQMA) Forward(theta, z []float64) (float64, error) {
	n := f.net.n
	if len(theta) != n || len(z) != n {
		return 0, fmt.Errorf("flows: Forward on %d→%d values, flow dimension %d", len(theta), len(z), n)
	}
	u := f.buf
	ld := 0.0
	for i, t := range theta {
		v, d := handSquash(f.scale[i]*(t-f.shift[i]), f.c)
		u[i] = v
		ld += d + math.Log(f.scale[i])
	}
	ld += f.net.forwardPoint(f.params, u, nil, f.work)
	for i, y := range u {
		zi, d := handUnsquash(y, f.c)
		z[i] = zi
		ld += d
	}
	if !scalar.Finite(ld) || !scalar.AllFinite(z) {
		return ld, fmt.Errorf("flows: Forward: %w", errHandNonFinite)
	}
	return ld, nil
}

// Inverse sets θ = T⁻¹(z) and returns log|det J_T⁻¹(z)| = −log|det J_T(θ)|.
func (f *handRQMA) Inverse(z, theta []float64) (float64, error) {
	n := f.net.n
	if len(theta) != n || len(z) != n {
		return 0, fmt.Errorf("flows: Inverse on %d→%d values, flow dimension %d", len(z), len(theta), n)
	}
	y := f.buf
	ld := 0.0 // log|det J_T(θ)|, accumulated
	for i, zi := range z {
		yi, d := handSquashInv(zi, f.c)
		y[i] = yi
		ld += d
	}
	ld += f.net.inversePoint(f.params, y, nil, f.work)
	for i, u := range y {
		v, d := handUnsquashInv(u, f.c)
		theta[i] = f.shift[i] + v/f.scale[i]
		ld += d + math.Log(f.scale[i])
	}
	if !scalar.Finite(ld) || !scalar.AllFinite(theta) {
		return -ld, fmt.Errorf("flows: Inverse: %w", errHandNonFinite)
	}
	return -ld, nil
}

const handHalfLog2Pi = 0.91893853320467274178

// handLogSigmoid is log(1/(1+e^−x)) without overflow.
func handLogSigmoid(x float64) float64 {
	if x > 0 {
		return -math.Log1p(math.Exp(-x))
	}
	return x - math.Log1p(math.Exp(x))
}

func handSigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// handSquash is h(v) = σ(c·v) and log h'(v).
func handSquash(v, c float64) (u, logDeriv float64) {
	cv := c * v
	return handSigmoid(cv), math.Log(c) + handLogSigmoid(cv) + handLogSigmoid(-cv)
}

// handUnsquash is h⁻¹(y) = logit(y)/c and log (h⁻¹)'(y).
func handUnsquash(y, c float64) (z, logDeriv float64) {
	ly, l1y := math.Log(y), math.Log1p(-y)
	return (ly - l1y) / c, -math.Log(c) - ly - l1y
}

// handSquashInv inverts handUnsquash: y = σ(c·z), and returns log (h⁻¹)'(y), the
// forward log-derivative at the recovered point, computed from z to keep
// precision in the tails.
func handSquashInv(z, c float64) (y, logDeriv float64) {
	cz := c * z
	return handSigmoid(cz), -math.Log(c) - handLogSigmoid(cz) - handLogSigmoid(-cz)
}

// handUnsquashInv inverts handSquash: v = logit(u)/c, and returns log h'(v).
func handUnsquashInv(u, c float64) (v, logDeriv float64) {
	v = (math.Log(u) - math.Log1p(-u)) / c
	cv := c * v
	return v, math.Log(c) + handLogSigmoid(cv) + handLogSigmoid(-cv)
}

// handLearner is a flow being trained: its flat parameters and a way to make
// per-goroutine workers.
type handLearner interface {
	params() []float64
	newWorker() handWorker
	maskGrad(g []float64)
	// freeSpans lists the index ranges of the parameters that can change;
	// workers never write gradients outside them.
	freeSpans() [][2]int
}

// handWorker evaluates Σ_r w_r·(−log q(x_r)) over sample rows idx (w_r = 1 when
// wts is nil), adding the gradient with respect to the parameters into g
// when g is non-nil. rng supplies any per-batch randomness.
type handWorker interface {
	batch(p []float64, idx []int, wts []float64, rng *rand.Rand, g []float64) float64
}

// handWorkerRows bounds the scratch of a handWorker; larger batches are chunked.
// At 128 rows gonum multiplies the rows×hidden blocks serially: from 256 it
// splits them over goroutines, which only adds overhead when the training
// workers already occupy the cores.
const handWorkerRows = 128

// handMinWorkerRows is the smallest share of a minibatch worth a goroutine.
const handMinWorkerRows = 32

// handTrain runs Adam on l over rows samples (the handLearner maps row indices to
// data). The split, minibatches, Adam and early stopping are flows' own
// (internal/training), so the two differ only in their losses and
// gradients.
func handTrain(l handLearner, rows int, weights []float64, o flows.TrainOptions) (*flows.TrainReport, error) {
	start := time.Now()
	rng := rand.New(rand.NewPCG(o.Seed, 0x7a1a))
	nw := o.Workers
	if nw == 0 {
		nw = 1
	}
	split, err := training.NewSplit(rng, rows, o.ValidationFraction, weights)
	if err != nil {
		return nil, fmt.Errorf("flows: %w", err)
	}
	tw := handNewTeam(l, nw)
	p := l.params()
	spans := l.freeSpans()
	adam := training.NewAdam(len(p))
	stop := training.NewEarlyStop(o.StopWindow, o.MinImprovement)
	rep := &flows.TrainReport{}
	lastVal := math.NaN()
	idx := make([]int, 0, training.BatchSize(o.BatchSize, o.DoubleAt, o.Iterations))
	for t := 0; t < o.Iterations; t++ {
		bs := training.BatchSize(o.BatchSize, o.DoubleAt, t)
		idx = split.Minibatch(idx, bs, rng)
		loss, ok := tw.gradient(p, idx, spans, rng.Uint64())
		l.maskGrad(tw.g)
		lr := training.LearningRate(o.LearningRate, o.Decay1, o.DecaySteps, o.Decay2, t)
		if !ok {
			rep.Skipped++
		} else {
			adam.Step(p, tw.g, spans, lr, t+1-rep.Skipped)
		}
		rep.Loss = append(rep.Loss, loss)
		rep.Iterations = t + 1
		if len(split.Val) > 0 && (t+1)%o.ValidateEvery == 0 {
			lastVal = tw.validationLoss(p, split)
			rep.ValidationLoss = append(rep.ValidationLoss, lastVal)
			stop.Add(lastVal)
		} else if len(split.Val) == 0 && scalar.Finite(loss) {
			stop.Add(loss)
		}
		if o.Progress != nil {
			o.Progress(flows.Progress{Done: t + 1, Total: o.Iterations, Iteration: t, Loss: loss, ValidationLoss: lastVal, LearningRate: lr, BatchSize: bs})
		}
		if stop.Stop(t, p) {
			rep.EarlyStopped = true
			break
		}
	}
	rep.Elapsed = time.Since(start)
	if rep.Skipped == rep.Iterations {
		return rep, fmt.Errorf("flows: every training step had a non-handFinite loss or gradient: %w", errHandNonFinite)
	}
	return rep, nil
}

// handTeam is the workers of a fit, each with its random stream and
// zeroed partial-gradient buffer, and the reduced gradient g.
type handTeam struct {
	workers []handWorker
	grads   [][]float64
	rngs    []*rand.Rand
	pcgs    []*rand.PCG
	losses  []float64
	g       []float64
}

func handNewTeam(l handLearner, nw int) *handTeam {
	np := len(l.params())
	tw := &handTeam{
		workers: make([]handWorker, nw),
		grads:   make([][]float64, nw),
		rngs:    make([]*rand.Rand, nw),
		pcgs:    make([]*rand.PCG, nw),
		losses:  make([]float64, nw),
		g:       make([]float64, np),
	}
	for i := range tw.workers {
		tw.workers[i] = l.newWorker()
		tw.grads[i] = make([]float64, np)
		tw.pcgs[i] = rand.NewPCG(0, 0)
		tw.rngs[i] = rand.New(tw.pcgs[i])
	}
	return tw
}

// gradient sets g to the mean gradient over the minibatch idx and returns
// the mean loss and whether both are handFinite; seed is the iteration's
// one master draw, whatever the number of workers.
func (tw *handTeam) gradient(p []float64, idx []int, spans [][2]int, seed uint64) (float64, bool) {
	bs := len(idx)
	for i := range tw.pcgs {
		tw.pcgs[i].Seed(seed, uint64(i))
	}
	// Small minibatches are not split: below handMinWorkerRows rows per
	// goroutine the smaller products cost more than the parallelism
	// saves.
	use := min(len(tw.workers), max(1, bs/handMinWorkerRows))
	loss := handParallel(tw.workers[:use], p, idx, nil, tw.rngs[:use], tw.grads[:use], tw.losses[:use]) / float64(bs)
	// Reduce in handWorker order, scale, and leave the handWorker buffers zeroed
	// for the next iteration, in one pass over the free parameters.
	inv := 1 / float64(bs)
	ok := scalar.Finite(loss)
	for _, sp := range spans {
		for i := sp[0]; i < sp[1]; i++ {
			s := 0.0
			for k := range tw.grads {
				s += tw.grads[k][i]
				tw.grads[k][i] = 0
			}
			s *= inv
			tw.g[i] = s
			ok = ok && !math.IsNaN(s) && !math.IsInf(s, 0)
		}
	}
	return loss, ok
}

// validationLoss is the mean loss over the whole validation set.
func (tw *handTeam) validationLoss(p []float64, split *training.Split) float64 {
	for i := range tw.pcgs {
		tw.pcgs[i].Seed(0xfeed, uint64(i))
	}
	return handParallel(tw.workers, p, split.Val, split.ValWeights, tw.rngs, nil, tw.losses) / split.ValTotal()
}

// handParallel splits idx into contiguous parts, one per handWorker, runs them
// concurrently and returns the summed loss, summed in handWorker order.
func handParallel(ws []handWorker, p []float64, idx []int, wts []float64, rngs []*rand.Rand, grads [][]float64, losses []float64) float64 {
	nw := len(ws)
	var wg sync.WaitGroup
	for k := range ws {
		lo := k * len(idx) / nw
		hi := (k + 1) * len(idx) / nw
		var g []float64
		if grads != nil {
			g = grads[k] // zeroed by the caller
		}
		var wk []float64
		if wts != nil {
			wk = wts[lo:hi]
		}
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			losses[k] = ws[k].batch(p, idx[lo:hi], wk, rngs[k], g)
		}(k)
	}
	wg.Wait()
	s := 0.0
	for _, l := range losses {
		s += l
	}
	return s
}

// handFitRQMA trains an handRQMA flow on the rows of x (samples of a distribution on
// R^n) by maximum likelihood. The handStandardisation uses the weighted sample
// means and reciprocal standard deviations of all rows; the network is
// initialised from opts.Seed.
func handFitRQMA(x [][]float64, cfg flows.RQMAConfig, opts flows.TrainOptions) (*handRQMA, *flows.TrainReport, error) {
	if _, err := training.CheckRows(x); err != nil {
		return nil, nil, err
	}
	shift, scale, err := training.Standardisation(x, opts.Weights, nil)
	if err != nil {
		return nil, nil, err
	}
	f := handNewRQMA(shift, scale, cfg, opts.Seed)
	rep, err := f.handTrain(x, opts)
	return f, rep, err
}

// handTrain fits the network of f, keeping its handStandardisation.
func (f *handRQMA) handTrain(x [][]float64, opts flows.TrainOptions) (*flows.TrainReport, error) {
	n := f.net.n
	l := &handRqmaLearner{f: f, pre: make([]float64, len(x)*n), preLD: make([]float64, len(x))}
	for r, row := range x {
		ld := 0.0
		for i, t := range row {
			u, d := handSquash(f.scale[i]*(t-f.shift[i]), f.c)
			l.pre[r*n+i] = u
			ld += d + math.Log(f.scale[i])
		}
		l.preLD[r] = ld
	}
	return handTrain(l, len(x), opts.Weights, opts)
}

// handRqmaLearner trains an handRQMA on pre-squashed samples: the handStandardisation
// and handSigmoid have no parameters, so they are applied once.
type handRqmaLearner struct {
	f     *handRQMA
	pre   []float64 // h(s(x)) per row, N×n
	preLD []float64 // log-determinant of h∘s per row
}

func (l *handRqmaLearner) params() []float64    { return l.f.params }
func (l *handRqmaLearner) maskGrad(g []float64) { l.f.net.maskGrad(g) }
func (l *handRqmaLearner) freeSpans() [][2]int  { return l.f.net.freeSpans(0) }

func (l *handRqmaLearner) newWorker() handWorker {
	n := l.f.net.n
	return &handRqmaWorker{
		l:  l,
		w:  l.f.net.newBatchWork(handWorkerRows),
		u:  make([]float64, handWorkerRows*n),
		ld: make([]float64, handWorkerRows),
		gy: make([]float64, handWorkerRows*n),
		gl: make([]float64, handWorkerRows),
	}
}

type handRqmaWorker struct {
	l             *handRqmaLearner
	w             *handBatchWork
	u, ld, gy, gl []float64
}

func (k *handRqmaWorker) batch(p []float64, idx []int, wts []float64, _ *rand.Rand, g []float64) float64 {
	tot := 0.0
	k.l.f.net.transposeWeights(p, k.w)
	for lo := 0; lo < len(idx); lo += handWorkerRows {
		hi := min(lo+handWorkerRows, len(idx))
		var wc []float64
		if wts != nil {
			wc = wts[lo:hi]
		}
		tot += k.chunk(p, idx[lo:hi], wc, g)
	}
	return tot
}

func (k *handRqmaWorker) chunk(p []float64, idx []int, wts []float64, g []float64) float64 {
	f := k.l.f
	n, c := f.net.n, f.c
	rows := len(idx)
	for r, j := range idx {
		copy(k.u[r*n:(r+1)*n], k.l.pre[j*n:(j+1)*n])
	}
	f.net.forwardBatch(p, k.w, rows, k.u, nil, k.ld)
	tot := 0.0
	for r, j := range idx {
		wr := 1.0
		if wts != nil {
			wr = wts[r]
		}
		ll := k.l.preLD[j] + k.ld[r] - float64(n)*handHalfLog2Pi
		for i := 0; i < n; i++ {
			y := k.w.y[r*n+i]
			z, d := handUnsquash(y, c)
			ll += d - 0.5*z*z
			// ∂(−log q)/∂y: through z = logit(y)/c and through log (h⁻¹)'(y).
			k.gy[r*n+i] = wr * (z/(c*y*(1-y)) + 1/y - 1/(1-y))
		}
		k.gl[r] = -wr
		tot -= wr * ll
	}
	if g != nil {
		f.net.backwardBatch(p, g, k.w, rows, k.gy, k.gl, nil)
	}
	return tot
}
