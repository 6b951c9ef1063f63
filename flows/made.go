package flows

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/blas"
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

// maskGrad zeroes the gradient of masked weights so they stay zero. Only the
// input weights need it: the block products of backwardBatch never write the
// masked entries of the other two weight matrices.
func (s *stack) maskGrad(g []float64) {
	for l := 0; l < s.layers; l++ {
		q := g[l*s.size : (l+1)*s.size]
		mul(q[s.oW1:s.oB1], s.m1)
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

func gen(rows, cols int, d []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: d[:rows*cols]}
}

// sub is the rows×cols block at (r0, c0) of a row-major matrix with the
// given stride.
func sub(d []float64, stride, r0, c0, rows, cols int) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: stride, Data: d[r0*stride+c0:]}
}

func vec(d []float64) blas64.Vector { return blas64.Vector{N: len(d), Inc: 1, Data: d} }

// batchWork is one goroutine's scratch for a minibatch pass of the stack.
type batchWork struct {
	rows int
	// Per layer: input (after the permutation), hidden activations and
	// spline parameters; plus the stack's output.
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

func (s *stack) newBatchWork(rows int) *batchWork {
	w := &batchWork{rows: rows}
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
func (s *stack) mlp(q []float64, rows int, x, ctx, h1, h2, o, wt []float64) {
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
	H1 := gen(rows, h, h1)
	H2 := gen(rows, h, h2)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, gen(rows, n, x), gen(n, h, w1t), 1, H1)
	if s.ctx > 0 {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, gen(rows, s.ctx, ctx), gen(s.ctx, h, c1t), 1, H1)
	}
	relu(h1[:rows*h])
	for d := 0; d < len(s.start)-1; d++ {
		a, b := s.start[d], s.start[d+1]
		if a == b {
			continue
		}
		if s.wide {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, sub(h1, h, 0, 0, rows, b), sub(w2t, h, 0, a, b, b-a), 1, sub(h2, h, 0, a, rows, b-a))
		} else {
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, sub(h1, h, 0, 0, rows, b), sub(q[s.oW2:], h, a, 0, b-a, b), 1, sub(h2, h, 0, a, rows, b-a))
		}
	}
	if s.ctx > 0 {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, gen(rows, s.ctx, ctx), gen(s.ctx, h, c2t), 1, H2)
	}
	relu(h2[:rows*h])
	for i := 0; i < n; i++ {
		if p := s.start[i+1]; p > 0 {
			if s.wide {
				blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, sub(h2, h, 0, 0, rows, p), sub(w3t, s.out, 0, i*s.per, p, s.per), 1, sub(o, s.out, 0, i*s.per, rows, s.per))
			} else {
				blas64.Gemm(blas.NoTrans, blas.Trans, 1, sub(h2, h, 0, 0, rows, p), sub(q[s.oW3:], h, i*s.per, 0, s.per, p), 1, sub(o, s.out, 0, i*s.per, rows, s.per))
			}
		}
	}
	s.scaleLogits(o[:rows*s.out])
}

// transposedLen is the length of one layer's transposed-weight buffer.
func (s *stack) transposedLen() int {
	h := s.hidden
	return h*s.n + s.wideLen() + 2*h*s.ctx
}

// wideLen is the room for the transposed hidden and output weights, which
// only a wide stack uses.
func (s *stack) wideLen() int {
	if !s.wide {
		return 0
	}
	return s.hidden * (s.hidden + s.out)
}

// transposedParts splits a layer's transposed-weight buffer into the
// transposes of its input (n×h), hidden (h×h) and output (h×out) weights,
// the latter two nil unless s.wide, and context (ctx×h, twice) weights.
func (s *stack) transposedParts(wt []float64) (w1t, w2t, w3t, c1t, c2t []float64) {
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
func (s *stack) transposeWeights(p []float64, w *batchWork) {
	h := s.hidden
	for l := 0; l < s.layers; l++ {
		q := p[l*s.size : (l+1)*s.size]
		w1t, w2t, w3t, c1t, c2t := s.transposedParts(w.wt[l])
		// Masked entries are zero in q and so in the copies.
		transpose(w1t, q[s.oW1:s.oB1], h, s.n)
		if s.wide {
			transpose(w2t, q[s.oW2:s.oB2], h, h)
			transpose(w3t, q[s.oW3:s.oB3], s.out, h)
		}
		if s.ctx > 0 {
			transpose(c1t, q[s.oC1:s.oC2], h, s.ctx)
			transpose(c2t, q[s.oC2:s.size], h, s.ctx)
		}
	}
}

// transpose sets dst (cols×rows) to the transpose of src (rows×cols), both
// row-major.
func transpose(dst, src []float64, rows, cols int) {
	for i := 0; i < rows; i++ {
		row := src[i*cols : (i+1)*cols]
		for j, v := range row {
			dst[j*rows+i] = v
		}
	}
}

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

// forwardBatch runs the stack on rows of u (B×n, in [0,1]) and writes the
// output to w.y and the per-row sum of spline log-derivatives into ld.
// transposeWeights(p, w) must have run since p last changed.
func (s *stack) forwardBatch(p []float64, w *batchWork, rows int, u, ctx, ld []float64) {
	n := s.n
	for r := 0; r < rows; r++ {
		ld[r] = 0
	}
	in := u
	for l := 0; l < s.layers; l++ {
		q := p[l*s.size : (l+1)*s.size]
		x := w.x[l]
		for r := 0; r < rows; r++ {
			reverseInto(x[r*n:(r+1)*n], in[r*n:(r+1)*n])
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
func (s *stack) constant() bool { return s.n == 1 && s.ctx == 0 }

func (s *stack) mlpRows(rows int) int {
	if s.constant() {
		return 1
	}
	return rows
}

func (s *stack) mlpRow(r int) int {
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
func (s *stack) knotRow(r, i int) int {
	if s.start[i+1] == 0 {
		return 0
	}
	return s.mlpRow(r)
}

func reverseInto(dst, src []float64) {
	n := len(src)
	for i := range src {
		dst[n-1-i] = src[i]
	}
}

// backwardBatch adds to g the gradient of Σ_r [gy_r·y_r + gl_r·ld_r] with
// respect to the stack parameters, where gy (B×n) is the upstream gradient of
// the output (overwritten) and gl the per-row weight of the log-determinant.
// forwardBatch must have run on the same rows, with the same context rows ctx
// (B×ctx; nil without context).
func (s *stack) backwardBatch(p, g []float64, w *batchWork, rows int, gy, gl, ctx []float64) {
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
		GH1 := gen(mrows, h, w.gh1)
		GH2 := gen(mrows, h, w.gh2)
		// Output layer, coordinate by coordinate over the unmasked prefix.
		for i := range w.gh2[:mrows*h] {
			w.gh2[i] = 0
		}
		for i := 0; i < n; i++ {
			p := s.start[i+1]
			if p == 0 {
				continue
			}
			goi := sub(gO, s.out, 0, i*s.per, mrows, s.per)
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, goi, sub(h2l, h, 0, 0, mrows, p), 1, sub(gq[s.oW3:], h, i*s.per, 0, s.per, p))
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, goi, sub(q[s.oW3:], h, i*s.per, 0, s.per, p), 1, sub(w.gh2, h, 0, 0, mrows, p))
		}
		colSum(gq[s.oB3:s.oC1], gO, mrows, s.out)
		reluGradSum(w.gh2, h2l, gq[s.oB2:s.oW3], mrows, h)
		// Second hidden layer, degree block by degree block.
		for i := range w.gh1[:mrows*h] {
			w.gh1[i] = 0
		}
		for d := 0; d < len(s.start)-1; d++ {
			a, b := s.start[d], s.start[d+1]
			if a == b {
				continue
			}
			gh2d := sub(w.gh2, h, 0, a, mrows, b-a)
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, gh2d, sub(h1l, h, 0, 0, mrows, b), 1, sub(gq[s.oW2:], h, a, 0, b-a, b))
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, gh2d, sub(q[s.oW2:], h, a, 0, b-a, b), 1, sub(w.gh1, h, 0, 0, mrows, b))
		}
		reluGradSum(w.gh1, h1l, gq[s.oB1:s.oW2], mrows, h)
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
			break // the stack's input carries no parameters
		}
		if !s.constant() { // else the masked input weights are all zero
			// gx = GH1·W1 as h-long dot products with the rows of W1ᵀ.
			w1t := w.wt[l][:n*h]
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, GH1, gen(n, h, w1t), 1, gen(rows, n, gx))
		}
		// Undo the permutation: the gradient of the previous layer's output.
		for r := 0; r < rows; r++ {
			reverseInto(gy[r*n:(r+1)*n], gx[r*n:(r+1)*n])
		}
	}
}

// addTransposedGrad adds Gᵀ·A (h×m) to dst, where A is rows×m and G
// rows×h, by computing Aᵀ·G into scratch and adding its transpose: gonum
// then runs h-long row updates, one per entry of the narrow A, instead of
// m-long ones per entry of G.
func (s *stack) addTransposedGrad(dst, a []float64, g blas64.General, rows, m int, scratch []float64) {
	h := s.hidden
	t := scratch[:m*h]
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(rows, m, a), g, 0, gen(m, h, t))
	for j := 0; j < m; j++ {
		row := t[j*h : (j+1)*h]
		for i, v := range row {
			dst[i*m+j] += v
		}
	}
}

func colSum(dst, m []float64, rows, cols int) {
	for r := 0; r < rows; r++ {
		row := m[r*cols : (r+1)*cols]
		for j, v := range row {
			dst[j] += v
		}
	}
}

// reluGradSum zeroes the entries of the rows×cols gradient g whose ReLU
// activation act was not positive and adds the column sums of the result
// (the bias gradient) to dst, in one pass.
func reluGradSum(g, act, dst []float64, rows, cols int) {
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

// hidden computes both hidden layers for one point.
func (s *stack) hiddenPoint(q, x, ctx []float64, w *pointWork) {
	h, n := s.hidden, s.n
	copy(w.h1, q[s.oB1:s.oW2])
	blas64.Gemv(blas.NoTrans, 1, gen(h, n, q[s.oW1:]), vec(x), 1, vec(w.h1))
	if s.ctx > 0 {
		blas64.Gemv(blas.NoTrans, 1, gen(h, s.ctx, q[s.oC1:]), vec(ctx), 1, vec(w.h1))
	}
	relu(w.h1)
	copy(w.h2, q[s.oB2:s.oW3])
	for d := 0; d < len(s.start)-1; d++ {
		a, b := s.start[d], s.start[d+1]
		if a < b {
			blas64.Gemv(blas.NoTrans, 1, sub(q[s.oW2:], h, a, 0, b-a, b), vec(w.h1[:b]), 1, vec(w.h2[a:b]))
		}
	}
	if s.ctx > 0 {
		blas64.Gemv(blas.NoTrans, 1, gen(h, s.ctx, q[s.oC2:]), vec(ctx), 1, vec(w.h2))
	}
	relu(w.h2)
}

// forwardPoint maps u ∈ [0,1]^n through the stack in place and returns the
// sum of spline log-derivatives.
func (s *stack) forwardPoint(p, u, ctx []float64, w *pointWork) float64 {
	ld := 0.0
	for l := 0; l < s.layers; l++ {
		q := p[l*s.size : (l+1)*s.size]
		reverseInto(w.a, u)
		s.hiddenPoint(q, w.a, ctx, w)
		copy(w.o, q[s.oB3:s.oC1])
		for i := 0; i < s.n; i++ {
			if p := s.start[i+1]; p > 0 {
				blas64.Gemv(blas.NoTrans, 1, sub(q[s.oW3:], s.hidden, i*s.per, 0, s.per, p), vec(w.h2[:p]), 1, vec(w.o[i*s.per:(i+1)*s.per]))
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
func (s *stack) inversePoint(p, y, ctx []float64, w *pointWork) float64 {
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
					blas64.Gemv(blas.NoTrans, 1, sub(q[s.oW1:], n, a, 0, b-a, i), vec(x[:i]), 1, vec(h1))
				}
				if s.ctx > 0 {
					blas64.Gemv(blas.NoTrans, 1, sub(q[s.oC1:], s.ctx, a, 0, b-a, s.ctx), vec(ctx), 1, vec(h1))
				}
				relu(h1)
				copy(h2, q[s.oB2+a:s.oB2+b])
				blas64.Gemv(blas.NoTrans, 1, sub(q[s.oW2:], h, a, 0, b-a, b), vec(w.h1[:b]), 1, vec(h2))
				if s.ctx > 0 {
					blas64.Gemv(blas.NoTrans, 1, sub(q[s.oC2:], s.ctx, a, 0, b-a, s.ctx), vec(ctx), 1, vec(h2))
				}
				relu(h2)
			}
			o := w.o[i*s.per : (i+1)*s.per]
			copy(o, q[s.oB3+i*s.per:s.oB3+(i+1)*s.per])
			if pr := s.start[i+1]; pr > 0 {
				blas64.Gemv(blas.NoTrans, 1, sub(q[s.oW3:], h, i*s.per, 0, s.per, pr), vec(w.h2[:pr]), 1, vec(o))
			}
			s.scaleLogits(o)
			uw, uh, ud := s.spline(w.o, i)
			xi, d := rqspline.Inverse(y[i], uw, uh, ud)
			x[i] = xi
			ld += d
		}
		reverseInto(y, x)
	}
	return ld
}
