package ops

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/internal/gemm"
)

// Activation is the elementwise function applied by MaskedLinear.
type Activation uint8

const (
	// Identity applies no activation.
	Identity Activation = iota
	// ReLU is max(v, 0).
	ReLU
	// Tanh is the hyperbolic tangent.
	Tanh
)

var activationNames = [...]string{Identity: "identity", ReLU: "relu", Tanh: "tanh"}

func (a Activation) String() string { return enumName(activationNames[:], "Activation", uint8(a)) }

// MaskedLinear is a fully connected layer over a batch whose weight matrix
// is masked block-triangularly, the layer of a MADE:
//
//	out[r, j] = act(b[j] + Σ_{i < prefix[j]} x[r, i]·w[j, i] + Σ_k Σ_i c_k[r, i]·v_k[j, i])
//
// x has shape (B, in), w (out, in), b (out) and prefix (length out) gives,
// for each output unit, how many leading inputs it sees; nil means all.
// Weights outside the mask are ignored (never read, and their gradient is
// zero), so the products do no work on them: output units with equal
// prefixes form one block product. extra holds further pairs c_k (B, m_k),
// v_k (out, m_k) that are added unmasked, for example a conditioner's
// context. Gradients flow to every input; the activation's derivative is
// taken from the output.
func MaskedLinear(x, w, b *gorgonia.Node, prefix []int, act Activation, extra ...*gorgonia.Node) (*gorgonia.Node, error) {
	if err := checkNodes("MaskedLinear", append([]*gorgonia.Node{x, w, b}, extra...)...); err != nil {
		return nil, err
	}
	if len(extra)%2 != 0 {
		return nil, fmt.Errorf("ops: MaskedLinear: %d extra inputs, want (input, weight) pairs", len(extra))
	}
	if act > Tanh {
		return nil, fmt.Errorf("ops: MaskedLinear: unknown activation %v", act)
	}
	ws := w.Shape()
	if len(ws) != 2 {
		return nil, fmt.Errorf("ops: MaskedLinear: weights of shape %v, want (out, in)", ws)
	}
	m, err := newMask(prefix, ws[0], ws[1])
	if err != nil {
		return nil, err
	}
	op := maskedOp{mask: m, act: act, pairs: 1 + len(extra)/2}
	args := append([]*gorgonia.Node{x, w, b}, extra...)
	if _, err := op.InferShape(dimSizers(args)...); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(op, args...)
}

func dimSizers(ns []*gorgonia.Node) []gorgonia.DimSizer {
	d := make([]gorgonia.DimSizer, len(ns))
	for i, n := range ns {
		d[i] = n.Shape()
	}
	return d
}

// mask is a block-triangular mask: output units [a, e) of a block all see
// inputs [0, p).
type mask struct {
	out, in int
	blocks  []maskBlock
	hash    uint64
}

type maskBlock struct{ a, e, p int }

func newMask(prefix []int, out, in int) (*mask, error) {
	if out < 1 || in < 1 {
		return nil, fmt.Errorf("ops: MaskedLinear: weights of shape (%d, %d)", out, in)
	}
	if prefix == nil {
		return &mask{out: out, in: in, blocks: []maskBlock{{0, out, in}}}, nil
	}
	if len(prefix) != out {
		return nil, fmt.Errorf("ops: MaskedLinear: %d prefixes for %d outputs", len(prefix), out)
	}
	m := &mask{out: out, in: in}
	h := fnv.New64a()
	for j, p := range prefix {
		if p < 0 || p > in {
			return nil, fmt.Errorf("ops: MaskedLinear: prefix[%d] = %d outside [0, %d]", j, p, in)
		}
		fmt.Fprint(h, p, ",")
		if k := len(m.blocks); k > 0 && m.blocks[k-1].p == p && m.blocks[k-1].e == j {
			m.blocks[k-1].e = j + 1
			continue
		}
		m.blocks = append(m.blocks, maskBlock{j, j + 1, p})
	}
	m.hash = h.Sum64()
	return m, nil
}

// single returns the mask's only block with a non-empty prefix, if it has
// exactly one.
func (m *mask) single() (maskBlock, bool) {
	var one maskBlock
	n := 0
	for _, bl := range m.blocks {
		if bl.p > 0 {
			one = bl
			n++
		}
	}
	return one, n == 1
}

// full reports whether the mask keeps every weight.
func (m *mask) full() bool { return len(m.blocks) == 1 && m.blocks[0].p == m.in }

func (m *mask) String() string {
	if m.full() {
		return fmt.Sprintf("%d→%d", m.in, m.out)
	}
	return fmt.Sprintf("%d→%d mask %x", m.in, m.out, m.hash)
}

// maskedKind selects what a maskedOp computes.
type maskedKind uint8

const (
	mlForward maskedKind = iota // the layer
	mlActGrad                   // g ⊙ act'(out): args out, g
	mlGradX                     // g·w (masked): args w, g
	mlGradW                     // gᵀ·x (masked): args x, g
	mlColSum                    // column sums of g: the bias gradient
)

// maskedOp implements MaskedLinear and its gradients. pair selects which
// (input, weight) pair a gradient is for: 0 is the masked pair.
type maskedOp struct {
	matOp
	kind  maskedKind
	mask  *mask
	act   Activation
	pairs int // forward: number of (input, weight) pairs
	pair  int // gradients: the pair
}

func (op maskedOp) Arity() int {
	switch op.kind {
	case mlForward:
		return 1 + 2*op.pairs
	case mlColSum:
		return 1
	}
	return 2
}

func (op maskedOp) Type() hm.Type {
	switch op.kind {
	case mlForward:
		ts := []hm.Type{tensorType(2), tensorType(2), tensorType(1)}
		for i := 1; i < op.pairs; i++ {
			ts = append(ts, tensorType(2), tensorType(2))
		}
		return hm.NewFnType(append(ts, tensorType(2))...)
	case mlColSum:
		return hm.NewFnType(tensorType(2), tensorType(1))
	}
	return hm.NewFnType(tensorType(2), tensorType(2), tensorType(2))
}

// shapes checks input shapes and returns the batch size and output shape.
func (op maskedOp) shapes(s []tensor.Shape) (int, tensor.Shape, error) {
	if len(s) != op.Arity() {
		return 0, nil, fmt.Errorf("ops: %v: got %d inputs, want %d", op, len(s), op.Arity())
	}
	for i, sh := range s {
		if len(sh) != 2 && !(op.kind == mlForward && i == 2) {
			return 0, nil, fmt.Errorf("ops: %v: input %d has shape %v, want a matrix", op, i, sh)
		}
	}
	out, in := op.mask.out, op.mask.in
	switch op.kind {
	case mlForward:
		B := s[0][0]
		if !s[0].Eq(tensor.Shape{B, in}) || !s[1].Eq(tensor.Shape{out, in}) || !s[2].Eq(tensor.Shape{out}) {
			return 0, nil, fmt.Errorf("ops: %v: shapes %v, %v, %v; want (B, %d), (%d, %d), (%d)", op, s[0], s[1], s[2], in, out, in, out)
		}
		for k := 3; k < len(s); k += 2 {
			c, v := s[k], s[k+1]
			if c[0] != B || v[0] != out || v[1] != c[1] {
				return 0, nil, fmt.Errorf("ops: %v: extra pair of shapes %v, %v; want (%d, m), (%d, m)", op, c, v, B, out)
			}
		}
		return B, tensor.Shape{B, out}, nil
	case mlActGrad:
		if !s[0].Eq(s[1]) || s[0][1] != out {
			return 0, nil, fmt.Errorf("ops: %v: shapes %v, %v", op, s[0], s[1])
		}
		return s[0][0], s[0].Clone(), nil
	case mlColSum:
		if s[0][1] != out {
			return 0, nil, fmt.Errorf("ops: %v: shape %v", op, s[0])
		}
		return s[0][0], tensor.Shape{out}, nil
	case mlGradX, mlGradW: // (w, g) or (x, g): w has out rows, x has B
		B := s[1][0]
		rows, what, shape := out, "weights", tensor.Shape{B, s[0][1]}
		if op.kind == mlGradW {
			rows, what, shape = B, "input", tensor.Shape{out, s[0][1]}
		}
		if s[1][1] != out || s[0][0] != rows {
			return 0, nil, fmt.Errorf("ops: %v: shapes %v, %v", op, s[0], s[1])
		}
		if op.pair == 0 && s[0][1] != in {
			return 0, nil, fmt.Errorf("ops: %v: %s %v", op, what, s[0])
		}
		return B, shape, nil
	}
	return 0, nil, fmt.Errorf("ops: %v: unknown kind", op)
}

func (op maskedOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	_, out, err := op.shapes(s)
	return out, err
}

func (op maskedOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op maskedOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op maskedOp) Hashcode() uint32                               { return hashOf(op) }
func (op maskedOp) String() string {
	name := [...]string{"MaskedLinear", "MaskedLinearActGrad", "MaskedLinearGradX", "MaskedLinearGradW", "MaskedLinearGradB"}[op.kind]
	return fmt.Sprintf("%s{%v,%v,pairs=%d,pair=%d}", name, op.act, op.mask, op.pairs, op.pair)
}

func (op maskedOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	if op.kind == mlForward {
		for i := range d {
			d[i] = true
		}
	}
	return d
}

func (op maskedOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if op.kind != mlForward {
		return nil, errNotDifferentiable
	}
	g := grad
	if op.act != Identity {
		var err error
		if g, err = gorgonia.ApplyOp(maskedOp{kind: mlActGrad, mask: op.mask, act: op.act}, out, grad); err != nil {
			return nil, err
		}
	}
	res := make(gorgonia.Nodes, len(in))
	var err error
	pair := func(p, xi, wi int) error {
		o := maskedOp{mask: op.mask, pair: p}
		o.kind = mlGradX
		if res[xi], err = gorgonia.ApplyOp(o, in[wi], g); err != nil {
			return err
		}
		o.kind = mlGradW
		res[wi], err = gorgonia.ApplyOp(o, in[xi], g)
		return err
	}
	if err := pair(0, 0, 1); err != nil {
		return nil, err
	}
	if res[2], err = gorgonia.ApplyOp(maskedOp{kind: mlColSum, mask: op.mask}, g); err != nil {
		return nil, err
	}
	for k := 3; k < len(in); k += 2 {
		if err := pair(1+(k-3)/2, k, k+1); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Lower implements ad.Lowerer.
func (op maskedOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	B, _, err := op.shapes(in)
	if err != nil {
		return nil, err
	}
	k := &maskedKernel{op: op, rows: B, cols: make([]int, len(in))}
	for i, s := range in {
		if len(s) == 2 {
			k.cols[i] = s[1]
		}
	}
	m := op.mask
	nonEmpty := 0
	for _, bl := range m.blocks {
		if bl.p > 0 {
			nonEmpty++
		}
	}
	// Products with the weights transposed run as long row updates (and
	// skip the zeros of ReLU activations); they pay when the mask is one
	// block or the input is narrow. With many blocks of a wide input the
	// per-block dot products are better.
	k.wide = nonEmpty <= 1 || m.in <= narrowInput
	if k.wide && (op.kind == mlForward || op.kind == mlGradX || op.kind == mlGradW) {
		k.wtLen = m.out * m.in
	}
	// The extra weights are transposed one at a time, after the masked
	// product: each reuses the same scratch.
	k.scratchLen = k.wtLen
	if op.kind == mlForward {
		for i := 4; i < len(in); i += 2 {
			k.scratchLen = max(k.scratchLen, in[i].TotalSize())
		}
	}
	// After it, gemm's packing scratch, for the largest inner dimension
	// of any product: the batch, the layer's widths or an extra input's.
	inner := max(B, m.in, m.out)
	for _, c := range k.cols {
		inner = max(inner, c)
	}
	k.gemmLen = gemm.WorkLen(inner)
	k.scratchLen += k.gemmLen
	return k, nil
}

// narrowInput is the input width up to which MaskedLinear multiplies by
// the transposed (masked) weights as one product, doing the masked-out
// work, rather than block by block.
const narrowInput = 32

// maskedKernel evaluates a maskedOp. Its scratch (transposed weights)
// comes from the Program (ad.Scratcher), shared with the program's other
// kernels; Eval, outside a Program, allocates its own on first use.
type maskedKernel struct {
	op         maskedOp
	rows       int
	cols       []int // column count of each 2-D input
	wide       bool
	wtLen      int       // scratch for the transposed masked weights or gradient
	gemmLen    int       // scratch for gemm's packed panels, at the end
	scratchLen int       // the most scratch any step needs, gemmLen included
	own        []float64 // Eval's scratch
}

// WritesFullOutput implements ad.FullWriter: Eval writes every element of out.
func (k *maskedKernel) WritesFullOutput() bool { return true }

// CloneKernel implements ad.Cloner: a clone allocates its own scratch if
// its Eval is called.
func (k *maskedKernel) CloneKernel() ad.Kernel {
	c := *k
	c.own = nil
	return &c
}

// ScratchLen implements ad.Scratcher.
func (k *maskedKernel) ScratchLen() int { return k.scratchLen }

// Eval implements ad.Kernel.
func (k *maskedKernel) Eval(out []float64, in [][]float64) error {
	if k.own == nil {
		k.own = make([]float64, k.scratchLen)
	}
	return k.EvalScratch(out, in, k.own)
}

// transposeMasked writes the transpose (in × out) of w (out × in) into t,
// with zeros outside the mask.
func (m *mask) transposeMasked(t, w []float64) {
	no, ni := m.out, m.in
	for _, bl := range m.blocks {
		for j := bl.a; j < bl.e; j++ {
			row := w[j*ni : j*ni+bl.p]
			for i, v := range row {
				t[i*no+j] = v
			}
			for i := bl.p; i < ni; i++ {
				t[i*no+j] = 0
			}
		}
	}
}

// dgemm is C = alpha·op(A)·op(B) + beta·C by internal/gemm, on the
// calling goroutine: gonum's Dgemm spreads large products over goroutines,
// which allocates and, when the caller's own workers occupy the cores (a
// training loss's do), costs more than it saves, and its serial path is
// several times slower than gemm's at a flow's sizes. work is the kernel's
// gemm scratch (gemm.WorkLen of the largest inner dimension).
func dgemm(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General, work []float64) {
	k := a.Cols
	if tA == blas.Trans {
		k = a.Rows
	}
	gemm.Dgemm(tA, tB, c.Rows, c.Cols, k, alpha, a.Data, a.Stride, b.Data, b.Stride, beta, c.Data, c.Stride, work)
}

func genM(rows, cols, stride int, d []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: stride, Data: d}
}

// EvalScratch implements ad.Scratcher.
func (k *maskedKernel) EvalScratch(out []float64, in [][]float64, scratch []float64) error {
	wt := scratch[:k.wtLen]
	gw := scratch[k.scratchLen-k.gemmLen : k.scratchLen]
	m := k.op.mask
	B, no := k.rows, m.out
	switch k.op.kind {
	case mlForward:
		x, w, b := in[0], in[1], in[2]
		for r := 0; r < B; r++ {
			copy(out[r*no:(r+1)*no], b)
		}
		ni := m.in
		if bl, ok := m.single(); ok && B > 1 {
			// One block: multiply by its transpose (p × cols) alone.
			cols := bl.e - bl.a
			t := wt[:bl.p*cols]
			for j := bl.a; j < bl.e; j++ {
				for i, v := range w[j*ni : j*ni+bl.p] {
					t[i*cols+j-bl.a] = v
				}
			}
			dgemm(blas.NoTrans, blas.NoTrans, 1, genM(B, bl.p, ni, x), genM(bl.p, cols, cols, t), 1, genM(B, cols, no, out[bl.a:]), gw)
		} else if k.wide && B > 1 {
			m.transposeMasked(wt, w)
			dgemm(blas.NoTrans, blas.NoTrans, 1, genM(B, ni, ni, x), genM(ni, no, no, wt), 1, genM(B, no, no, out), gw)
		} else if B == 1 {
			for _, bl := range m.blocks {
				if bl.p > 0 {
					blas64.Gemv(blas.NoTrans, 1, genM(bl.e-bl.a, bl.p, ni, w[bl.a*ni:]), blas64.Vector{N: bl.p, Inc: 1, Data: x}, 1, blas64.Vector{N: bl.e - bl.a, Inc: 1, Data: out[bl.a:]})
				}
			}
		} else {
			for _, bl := range m.blocks {
				if bl.p > 0 {
					dgemm(blas.NoTrans, blas.Trans, 1, genM(B, bl.p, ni, x), genM(bl.e-bl.a, bl.p, ni, w[bl.a*ni:]), 1, genM(B, bl.e-bl.a, no, out[bl.a:]), gw)
				}
			}
		}
		for i := 3; i < len(in); i += 2 {
			c := k.cols[i]
			if B == 1 {
				// out += V c: no transpose, and a Gemv, which never
				// spreads over goroutines (Gemm allocates when it does).
				blas64.Gemv(blas.NoTrans, 1, genM(no, c, c, in[i+1]), blas64.Vector{N: c, Inc: 1, Data: in[i]}, 1, blas64.Vector{N: no, Inc: 1, Data: out})
				continue
			}
			vt := scratch[:no*c]
			transpose(vt, in[i+1], no, c)
			dgemm(blas.NoTrans, blas.NoTrans, 1, genM(B, c, c, in[i]), genM(c, no, no, vt), 1, genM(B, no, no, out), gw)
		}
		switch k.op.act {
		case ReLU:
			relu(out)
		case Tanh:
			for i, v := range out {
				out[i] = math.Tanh(v)
			}
		}
	case mlActGrad:
		y, g := in[0], in[1]
		switch k.op.act {
		case ReLU:
			reluGrad(out, y, g)
		case Tanh:
			for i, v := range y {
				out[i] = g[i] * (1 - v*v)
			}
		default:
			copy(out, g)
		}
	case mlColSum:
		g := in[0]
		clear(out)
		for r := 0; r < B; r++ {
			row := g[r*no : (r+1)*no]
			for j, v := range row {
				out[j] += v
			}
		}
	case mlGradX: // out (B, ni) = g (B, no) · w (no, ni), masked
		w, g := in[0], in[1]
		ni := k.cols[0]
		clear(out)
		if k.op.pair != 0 {
			dgemm(blas.NoTrans, blas.NoTrans, 1, genM(B, no, no, g), genM(no, ni, ni, w), 0, genM(B, ni, ni, out), gw)
			return nil
		}
		if k.wide && ni <= narrowInput {
			// Dot products of length out with the rows of the transposed
			// weights, rather than updates of length ni.
			m.transposeMasked(wt, w)
			dgemm(blas.NoTrans, blas.Trans, 1, genM(B, no, no, g), genM(ni, no, no, wt), 0, genM(B, ni, ni, out), gw)
			return nil
		}
		for _, bl := range m.blocks {
			if bl.p > 0 {
				dgemm(blas.NoTrans, blas.NoTrans, 1, genM(B, bl.e-bl.a, no, g[bl.a:]), genM(bl.e-bl.a, bl.p, ni, w[bl.a*ni:]), 1, genM(B, bl.p, ni, out), gw)
			}
		}
	case mlGradW: // out (no, ni) = gᵀ (no, B) · x (B, ni), masked
		x, g := in[0], in[1]
		ni := k.cols[0]
		if k.op.pair != 0 {
			dgemm(blas.Trans, blas.NoTrans, 1, genM(B, no, no, g), genM(B, ni, ni, x), 0, genM(no, ni, ni, out), gw)
			return nil
		}
		if k.wide && ni <= narrowInput {
			// xᵀ·g (ni × out) as long row updates, then transposed into
			// place with the mask applied.
			dgemm(blas.Trans, blas.NoTrans, 1, genM(B, ni, ni, x), genM(B, no, no, g), 0, genM(ni, no, no, wt), gw)
			for _, bl := range m.blocks {
				for j := bl.a; j < bl.e; j++ {
					row := out[j*ni : (j+1)*ni]
					for i := range row[:bl.p] {
						row[i] = wt[i*no+j]
					}
					clear(row[bl.p:])
				}
			}
			return nil
		}
		for _, bl := range m.blocks {
			if bl.p > 0 {
				dgemm(blas.Trans, blas.NoTrans, 1, genM(B, bl.e-bl.a, no, g[bl.a:]), genM(B, bl.p, ni, x), 0, genM(bl.e-bl.a, bl.p, ni, out[bl.a*ni:]), gw)
			}
			if bl.p < ni {
				for j := bl.a; j < bl.e; j++ {
					clear(out[j*ni+bl.p : (j+1)*ni])
				}
			}
		}
	}
	return nil
}

// relu sets the negative elements of x to +0, keeping the others (−0 and
// NaN among them). The signs of the activations are random, so it selects
// by masking the bits rather than branching.
func relu(x []float64) {
	for i, v := range x {
		m := ^uint64(0)
		if v < 0 {
			m = 0
		}
		x[i] = math.Float64frombits(math.Float64bits(v) & m)
	}
}

// reluGrad sets out to g where y > 0 and to +0 elsewhere, by masking the
// bits as relu does.
func reluGrad(out, y, g []float64) {
	g = g[:len(y)]
	out = out[:len(y)]
	for i, v := range y {
		var m uint64
		if v > 0 {
			m = ^uint64(0)
		}
		out[i] = math.Float64frombits(math.Float64bits(g[i]) & m)
	}
}

// transpose sets dst (cols × rows) to the transpose of src (rows × cols).
func transpose(dst, src []float64, rows, cols int) {
	for i := 0; i < rows; i++ {
		for j, v := range src[i*cols : (i+1)*cols] {
			dst[j*rows+i] = v
		}
	}
}
