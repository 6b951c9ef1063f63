package ops

import (
	"errors"
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
)

// HMMMarginal returns the log marginal likelihood of a hidden Markov model,
// log Σ over all state paths z of exp(logInit[z₁] + Σ_t logEmit[t, z_t] +
// Σ_t logTrans[z_t, z_{t+1}]), the hidden states summed out by the forward
// algorithm. It is Stan's hmm_marginal on the log scale: a model with
// an HMM likelihood writes its emissions and transitions and gets the
// likelihood and its gradient from one op, rather than unrolling the
// recursion into thousands of graph nodes.
//
// logEmit is an N × K matrix whose row t holds log p(y_t | z_t = k);
// logTrans is K × K with row j holding log P(z_{t+1} = · | z_t = j);
// logInit holds the K log initial weights. Nothing need be normalised, so
// a model without an initial distribution passes nil for logInit (all
// weights 1, log 0), and entries may be −Inf (impossible transitions or
// emissions). All three are differentiable.
//
// The recursions run on the probability scale, each step's vector
// rescaled by a power of two and each step's emissions by their maximum, at
// a cost of N·K + K² exponentials for the value and gradient together.
// Where that would lose a term to underflow (a step whose only paths lie
// some e⁻⁵⁷⁰ below the maxima it is scaled by) the kernel reruns in log
// space, with a max-shifted log-sum-exp at every step (about 3·N·K²
// exponentials), so emissions of −700 and less, or −Inf transitions, are
// exact either way. The gradient comes from the forward–backward algorithm
// in the same kernel: ∂/∂logEmit[t, k] is the posterior probability of
// z_t = k, ∂/∂logTrans[j, k] the expected number of j → k transitions, and
// ∂/∂logInit[k] the posterior of z₁ = k. When no path is possible the
// result is −Inf with a zero gradient; NaN or +Inf inputs give a
// non-finite result, which a compiled program reports as ad.ErrNonFinite.
func HMMMarginal(logEmit, logTrans, logInit *gorgonia.Node) (*gorgonia.Node, error) {
	args := []*gorgonia.Node{logEmit, logTrans}
	if logInit != nil {
		args = append(args, logInit)
	}
	if err := checkNodes("HMMMarginal", args...); err != nil {
		return nil, err
	}
	op := hmmOp{hasInit: logInit != nil}
	shapes := make([]gorgonia.DimSizer, len(args))
	for i, a := range args {
		shapes[i] = a.Shape()
	}
	packedShape, err := op.InferShape(shapes...)
	if err != nil {
		return nil, err
	}
	packed, err := gorgonia.ApplyOp(op, args...)
	if err != nil {
		return nil, fmt.Errorf("ops: HMMMarginal: %w", err)
	}
	return gorgonia.ApplyOp(sliceOp{off: 0, in: packedShape, out: tensor.ScalarShape()}, packed)
}

// hmmOp maps (logEmit, logTrans[, logInit]) to the packed vector (ℓ,
// ∂ℓ/∂logEmit (N·K), ∂ℓ/∂logTrans (K·K)[, ∂ℓ/∂logInit (K)]). HMMMarginal
// exposes only ℓ, through a sliceOp, so the output gradient reaching
// SymDiff is zero beyond its first entry.
type hmmOp struct {
	matOp
	hasInit bool
}

// hmmDims validates the input shapes and returns N and K.
func (op hmmOp) hmmDims(s []tensor.Shape) (n, k int, err error) {
	if len(s) != op.Arity() {
		return 0, 0, fmt.Errorf("ops: HMMMarginal: got %d inputs, want %d", len(s), op.Arity())
	}
	e, tr := s[0], s[1]
	if len(e) != 2 || e[0] < 1 || e[1] < 1 {
		return 0, 0, fmt.Errorf("ops: HMMMarginal: logEmit has shape %v, want a non-empty N × K matrix (row t: log p(y_t | state k))", e)
	}
	n, k = e[0], e[1]
	if len(tr) != 2 || tr[0] != k || tr[1] != k {
		return 0, 0, fmt.Errorf("ops: HMMMarginal: logTrans has shape %v, want %d × %d to match logEmit's %d states", tr, k, k, k)
	}
	if op.hasInit && (len(s[2]) != 1 || s[2][0] != k) {
		return 0, 0, fmt.Errorf("ops: HMMMarginal: logInit has shape %v, want a vector of %d (one weight per state)", s[2], k)
	}
	return n, k, nil
}

// packedLen is the length of the packed output.
func (op hmmOp) packedLen(n, k int) int {
	m := 1 + n*k + k*k
	if op.hasInit {
		m += k
	}
	return m
}

func (op hmmOp) Arity() int {
	if op.hasInit {
		return 3
	}
	return 2
}
func (op hmmOp) Type() hm.Type {
	if op.hasInit {
		return hm.NewFnType(tensorType(2), tensorType(2), tensorType(1), tensorType(1))
	}
	return hm.NewFnType(tensorType(2), tensorType(2), tensorType(1))
}
func (op hmmOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	n, k, err := op.hmmDims(s)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{op.packedLen(n, k)}, nil
}
func (op hmmOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op hmmOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op hmmOp) Hashcode() uint32                               { return hashOf(op) }
func (op hmmOp) String() string                                 { return fmt.Sprintf("HMMMarginal{init=%v}", op.hasInit) }

func (op hmmOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op hmmOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want %d", op, len(in), op.Arity())
	}
	res := make(gorgonia.Nodes, len(in))
	off := 1
	for a, x := range in {
		g := hmmGradOp{off: off, out: x.Shape().Clone()}
		var err error
		if res[a], err = gorgonia.ApplyOp(g, out, grad); err != nil {
			return nil, err
		}
		off += x.Shape().TotalSize()
	}
	return res, nil
}

// Lower implements ad.Lowerer.
func (op hmmOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	n, k, err := op.hmmDims(in)
	if err != nil {
		return nil, err
	}
	return newHMMKernel(n, k, op.hasInit), nil
}

// hmmKernel runs the forward–backward algorithm: on the probability
// scale with a power-of-two rescaling per step where that is exact enough
// (scaled), else in log space (logSpace). Its scratch is its own, so each
// Program clone gets a fresh kernel.
type hmmKernel struct {
	n, k    int
	hasInit bool
	emit    []float64 // scaled: exp(logEmit[t, ·] − max_k logEmit[t, k]), N × K
	trans   []float64 // scaled: exp(logTrans − max logTrans), K × K
	beta    []float64 // scaled β̂_{t+1}; log space: log β_{t+1}, then log β_t
	u       []float64 // scaled: E_{t+1} ⊙ β̂_{t+1}; log space: logEmit[t+1, ·] + log β_{t+1}
	next    []float64
}

func newHMMKernel(n, k int, hasInit bool) *hmmKernel {
	s := make([]float64, n*k+k*k+3*k)
	e, tr, v := s[:n*k:n*k], s[n*k:n*k+k*k:n*k+k*k], s[n*k+k*k:]
	return &hmmKernel{n: n, k: k, hasInit: hasInit, emit: e, trans: tr, beta: v[:k:k], u: v[k : 2*k : 2*k], next: v[2*k:]}
}

// CloneKernel implements ad.Cloner: each clone needs its own scratch.
func (k *hmmKernel) CloneKernel() ad.Kernel { return newHMMKernel(k.n, k.k, k.hasInit) }

// WritesFullOutput implements ad.FullWriter: Eval writes every element of out.
func (k *hmmKernel) WritesFullOutput() bool { return true }

// Eval computes ℓ and its gradient, by the scaled recursions unless they
// report a loss of precision, then in log space.
func (k *hmmKernel) Eval(out []float64, in [][]float64) error {
	nIn := 2
	if k.hasInit {
		nIn = 3
	}
	if len(in) != nIn || len(in[0]) != k.n*k.k || len(in[1]) != k.k*k.k || k.hasInit && len(in[2]) != k.k ||
		len(out) != (hmmOp{hasInit: k.hasInit}).packedLen(k.n, k.k) {
		return errBufferSize
	}
	if !k.scaled(out, in) {
		k.logSpace(out, in)
	}
	return nil
}

// hmmTiny bounds the terms the scaled recursions keep: each sum they
// normalise by is at least hmmTiny (in units where every factor is at most
// 1), so the terms lost to underflow, each below 2⁻¹⁰²², change it by less
// than 10⁻⁵⁰ relative. A smaller sum (an improbable stretch of the
// sequence that the maxima used for scaling miss) sends Eval to logSpace.
const hmmTiny = 1e-250

// scaled is the forward–backward algorithm on the probability scale
// (Rabiner's scaling, with every normaliser taken per step): with
// A = exp(logTrans − max logTrans), E_t = exp(logEmit_t − max_k logEmit_t),
// â_t ∝ E_t ⊙ (Aᵀ â_{t−1}) rescaled by a power of two (exact), and β̂_t ∝
// A (E_{t+1} ⊙ β̂_{t+1}) likewise, the expected transitions are
// ξ_t(j,k) ∝ â_t(j) A(j,k) E_{t+1}(k) β̂_{t+1}(k), normalised to sum to 1 at
// each t, and the posterior marginals their row sums. It costs N·K + K²
// exponentials and one logarithm. It returns false, having written
// nothing it needs, when a normaliser falls below hmmTiny, is not finite,
// or an input is not finite enough to scale by (NaN, ±Inf maxima).
func (k *hmmKernel) scaled(out []float64, in [][]float64) bool {
	n, K := k.n, k.k
	emit, trans := in[0], in[1]
	alpha := out[1 : 1+n*K]
	A, E := k.trans, k.emit

	r := maxOf(trans)
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return false
	}
	for i, v := range trans {
		A[i] = math.Exp(v - r)
	}
	// The scale of α_t is 2^exp2 · e^logScale.
	var logScale float64
	exp2 := 0
	for t := range n {
		row, e := emit[t*K:(t+1)*K], E[t*K:(t+1)*K] // E_0 is unused with logInit
		cur := alpha[t*K : (t+1)*K]
		if t == 0 && k.hasInit {
			for c := range K {
				cur[c] = row[c] + in[2][c]
			}
			m := maxOf(cur)
			if math.IsInf(m, 0) || math.IsNaN(m) {
				return false
			}
			for c := range K {
				cur[c] = math.Exp(cur[c] - m)
			}
			logScale += m
		} else {
			m := maxOf(row)
			if math.IsInf(m, 0) || math.IsNaN(m) {
				return false
			}
			for c := range K {
				e[c] = math.Exp(row[c] - m)
			}
			logScale += m
			if t == 0 {
				copy(cur, e)
			} else {
				prev := alpha[(t-1)*K : t*K]
				for c := range K {
					var s float64
					for j, a := range prev {
						s += a * A[j*K+c]
					}
					cur[c] = s * e[c]
				}
				logScale += r
			}
		}
		mx := maxOf(cur)
		if !(mx >= hmmTiny) || math.IsInf(mx, 1) {
			return false
		}
		_, ex := math.Frexp(mx)
		f := math.Ldexp(1, -ex)
		for c := range cur {
			cur[c] *= f
		}
		exp2 += ex
	}
	last := alpha[(n-1)*K:]
	var sum float64
	for _, a := range last {
		sum += a
	}
	ll := logScale + float64(exp2)*math.Ln2 + math.Log(sum)
	if math.IsInf(ll, 0) || math.IsNaN(ll) {
		return false
	}
	return k.scaledBackward(out, ll, sum)
}

// scaledBackward is scaled's backward pass; the last row of α̂ sums to
// last.
func (k *hmmKernel) scaledBackward(out []float64, ll, last float64) bool {
	n, K := k.n, k.k
	post := out[1 : 1+n*K]
	dTrans := out[1+n*K : 1+n*K+K*K]
	A, E := k.trans, k.emit
	b, v := k.beta, k.u
	for c := range b {
		b[c] = 1
	}
	for c, a := range post[(n-1)*K:] {
		post[(n-1)*K+c] = a / last
	}
	clear(dTrans)
	for t := n - 2; t >= 0; t-- {
		e := E[(t+1)*K : (t+2)*K]
		for c := range K {
			v[c] = e[c] * b[c]
		}
		row := post[t*K : (t+1)*K]
		// b̃_t(j) = Σ_k A(j,k) v_k; Z = Σ_j â_t(j) b̃_t(j).
		var z, mx float64
		for j := range K {
			var s float64
			for c, w := range A[j*K : (j+1)*K] {
				s += w * v[c]
			}
			b[j] = s
			z += row[j] * s
			mx = max(mx, s)
		}
		if !(z >= hmmTiny) || math.IsInf(z, 1) {
			return false
		}
		iz := 1 / z
		for j := range K {
			if row[j] == 0 {
				continue
			}
			aj := row[j] * iz
			dj := dTrans[j*K : (j+1)*K]
			for c, w := range A[j*K : (j+1)*K] {
				dj[c] += aj * w * v[c]
			}
			row[j] *= b[j] * iz
		}
		_, ex := math.Frexp(mx)
		f := math.Ldexp(1, -ex)
		for j := range b {
			b[j] *= f
		}
	}
	if k.hasInit {
		copy(out[1+n*K+K*K:], post[:K])
	}
	out[0] = ll
	return true
}

// maxOf is the largest entry of x, NaN if there is one.
func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		if v > m || math.IsNaN(v) {
			m = v
		}
	}
	return m
}

// logSpace computes ℓ and its gradient with the recursions in log space:
// slower (about 3·N·K² exponentials) but exact wherever scaled would lose
// a term. The forward variables log α_t are kept in the output's
// logEmit-gradient block, which the backward pass overwrites with the
// posterior marginals row by row, from the last.
func (k *hmmKernel) logSpace(out []float64, in [][]float64) {
	n, K := k.n, k.k
	emit, trans := in[0], in[1]
	alpha := out[1 : 1+n*K]
	dTrans := out[1+n*K : 1+n*K+K*K]
	clear(dTrans)

	// Forward: log α_0 = logInit + logEmit_0,
	// log α_t(k) = logEmit_t(k) + LSE_j(log α_{t−1}(j) + logTrans(j, k)).
	copy(alpha[:K], emit[:K])
	if k.hasInit {
		for s, v := range in[2] {
			alpha[s] += v
		}
	}
	for t := 1; t < n; t++ {
		prev, cur := alpha[(t-1)*K:t*K], alpha[t*K:(t+1)*K]
		for c := range K {
			m := math.Inf(-1)
			for j, a := range prev {
				if v := a + trans[j*K+c]; v > m {
					m = v
				}
			}
			if math.IsInf(m, -1) {
				cur[c] = m
				continue
			}
			var s float64
			for j, a := range prev {
				s += math.Exp(a + trans[j*K+c] - m)
			}
			cur[c] = emit[t*K+c] + m + math.Log(s)
		}
	}
	ll := logSumExpSlice(alpha[(n-1)*K:])
	out[0] = ll
	if math.IsInf(ll, 0) || math.IsNaN(ll) {
		// No path is possible (−Inf: zero gradient), or an input is NaN or
		// +Inf (the non-finite value is the error the program reports).
		clear(out[1:])
		return
	}
	k.backward(out, in, ll)
}

// backward overwrites the forward variables in out's logEmit block with the
// posterior marginals and fills the logTrans (and logInit) blocks. With
// e_jk = exp(logTrans(j,k) + u_k − m_j), u = logEmit_{t+1} + log β_{t+1}
// and m_j the row maximum, log β_t(j) = m_j + log Σ_k e_jk, the expected
// transition is ξ_t(j,k) = exp(log α_t(j) + m_j − ℓ)·e_jk and the
// posterior of z_t = j is Σ_k ξ_t(j,k): one exponential per (j, k).
func (k *hmmKernel) backward(out []float64, in [][]float64, ll float64) {
	n, K := k.n, k.k
	emit, trans := in[0], in[1]
	post := out[1 : 1+n*K]
	dTrans := out[1+n*K : 1+n*K+K*K]
	beta, u, next := k.beta, k.u, k.next
	clear(beta)
	last := post[(n-1)*K:]
	for s, a := range last {
		last[s] = math.Exp(a - ll)
	}
	for t := n - 2; t >= 0; t-- {
		for c := range K {
			u[c] = emit[(t+1)*K+c] + beta[c]
		}
		row := post[t*K : (t+1)*K]
		for j := range K {
			tj := trans[j*K : (j+1)*K]
			m := math.Inf(-1)
			for c, w := range tj {
				if v := w + u[c]; v > m {
					m = v
				}
			}
			if math.IsInf(m, -1) {
				// No continuation from j: β_t(j) = 0, and so is ξ.
				next[j], row[j] = m, 0
				continue
			}
			// An unreachable j (log α = −Inf) has scale 0.
			scale := math.Exp(row[j] + m - ll)
			var s, g float64
			dj := dTrans[j*K : (j+1)*K]
			for c, w := range tj {
				e := math.Exp(w + u[c] - m)
				s += e
				x := scale * e
				dj[c] += x
				g += x
			}
			next[j] = m + math.Log(s)
			row[j] = g
		}
		copy(beta, next)
	}
	if k.hasInit {
		copy(out[1+n*K+K*K:], post[:K])
	}
}

// logSumExpSlice is log Σ exp(x), max-shifted; −Inf if every entry is.
func logSumExpSlice(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		if v > m || math.IsNaN(v) {
			m = v
		}
	}
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return m
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// errHMMPacked is returned if a graph differentiates through the gradient
// entries of hmmOp's packed output, which HMMMarginal never exposes.
var errHMMPacked = errors.New("ops: HMMMarginal: only the log-likelihood entry of the packed output is differentiable")

// hmmGradOp is ḡ₀·(entries off … off+size(out)−1) of hmmOp's packed output,
// shaped as out: the gradient of one argument, read from what the forward
// kernel computed through the graph, so clones share no state.
type hmmGradOp struct {
	gradOp
	off int
	out tensor.Shape
}

func (op hmmGradOp) Arity() int { return 2 }
func (op hmmGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(1), tensorType(1), tensorType(len(op.out)))
}
func (op hmmGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOfN(op, in, 2)
	if err != nil {
		return nil, err
	}
	if len(s[0]) != 1 || !s[1].Eq(s[0]) || op.off < 1 || op.off+op.out.TotalSize() > s[0][0] {
		return nil, fmt.Errorf("ops: %v: shapes %v, want two equal vectors holding entries %d…%d", op, s, op.off, op.off+op.out.TotalSize()-1)
	}
	return op.out.Clone(), nil
}
func (op hmmGradOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op hmmGradOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op hmmGradOp) Hashcode() uint32                               { return hashOf(op) }
func (op hmmGradOp) String() string {
	return fmt.Sprintf("HMMMarginalGrad{%d,%v}", op.off, op.out)
}

// Lower implements ad.Lowerer.
func (op hmmGradOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want 2", op, len(in))
	}
	if _, err := op.InferShape(in[0], in[1]); err != nil {
		return nil, err
	}
	return packedGradKernel{off: op.off, n: op.out.TotalSize(), packed: in[0][0], err: errHMMPacked}, nil
}
