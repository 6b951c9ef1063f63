package flows

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/ad/ops"
)

// gb builds a gorgonia graph, keeping the first error so that a layer reads
// as a sequence of operations. Parameters are input nodes, each a block of
// the flat parameter vector (see view).
type gb struct {
	g      *gorgonia.ExprGraph
	err    error
	params []paramBlock
	// values, when set, makes parameter blocks data nodes holding these
	// values (evaluation) instead of variables (training).
	values []float64
}

// paramBlock is an input node holding params[off : off+size].
type paramBlock struct {
	node *gorgonia.Node
	off  int
}

func (b *gb) n(n *gorgonia.Node, err error) *gorgonia.Node {
	if b.err == nil && err != nil {
		b.err = err
	}
	return n
}

func (b *gb) scalar(v float64) *gorgonia.Node { return gorgonia.NewConstant(v) }

// matrix returns a data node of the given shape holding v (zeros if nil).
func (b *gb) data(name string, v []float64, shape ...int) *gorgonia.Node {
	sz := 1
	for _, d := range shape {
		sz *= d
	}
	if v == nil {
		v = make([]float64, sz)
	}
	t := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	if len(shape) == 1 {
		return gorgonia.NewVector(b.g, tensor.Float64, gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(t))
	}
	return gorgonia.NewMatrix(b.g, tensor.Float64, gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(t))
}

// view returns the parameters p[off : off+size(shape)] as an input node of
// that shape. The blocks of a graph must tile the parameter vector; ad then
// differentiates with respect to each block, with no slicing or gathering.
func (b *gb) view(off int, shape ...int) *gorgonia.Node {
	var v *gorgonia.Node
	name := fmt.Sprintf("params[%d:]", off)
	opts := []gorgonia.NodeConsOpt{gorgonia.WithShape(shape...), gorgonia.WithName(name)}
	if b.values != nil {
		sz := tensor.Shape(shape).TotalSize()
		if off+sz > len(b.values) {
			if b.err == nil {
				b.err = fmt.Errorf("flows: parameters [%d, %d) beyond the %d of the flow", off, off+sz, len(b.values))
			}
			return nil
		}
		// The node's value is a view of the flow's parameters: compiled
		// WithSharedData, programs and their clones read them in place.
		t := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(b.values[off:off+sz:off+sz]))
		opts = append(opts, gorgonia.WithValue(t))
	}
	if len(shape) == 1 {
		v = gorgonia.NewVector(b.g, tensor.Float64, opts...)
	} else {
		v = gorgonia.NewMatrix(b.g, tensor.Float64, opts...)
	}
	b.params = append(b.params, paramBlock{v, off})
	return v
}

// paramNodes returns the parameter blocks' nodes.
func (b *gb) paramNodes() []*gorgonia.Node {
	ns := make([]*gorgonia.Node, len(b.params))
	for i, p := range b.params {
		ns[i] = p.node
	}
	return ns
}

// compileMap compiles the single-point map from in to outs, reading the
// parameters in place; what names the graph in errors, which include one
// met while building it.
func (b *gb) compileMap(what string, in *gorgonia.Node, outs ...*gorgonia.Node) (*ad.Program, error) {
	if b.err != nil {
		return nil, fmt.Errorf("flows: building the %s: %w", what, b.err)
	}
	prog, err := ad.CompileOutputs(b.g, []*gorgonia.Node{in}, outs, ad.WithSharedData(b.paramNodes()...))
	if err != nil {
		return nil, fmt.Errorf("flows: compiling the %s: %w", what, err)
	}
	return prog, nil
}

// wrt returns the parameter blocks in order, checking that they tile
// [0, size).
func (b *gb) wrt(size int) ([]*gorgonia.Node, error) {
	ps := append([]paramBlock(nil), b.params...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].off < ps[j].off })
	var nodes []*gorgonia.Node
	at := 0
	for _, p := range ps {
		if p.off != at {
			return nil, fmt.Errorf("flows: parameter blocks leave a gap or overlap at %d", at)
		}
		at += p.node.Shape().TotalSize()
		nodes = append(nodes, p.node)
	}
	if at != size {
		return nil, fmt.Errorf("flows: parameter blocks cover %d of %d parameters", at, size)
	}
	return nodes, nil
}

// rowSum sums a (B, n) node over its columns.
func (b *gb) rowSum(x *gorgonia.Node) *gorgonia.Node { return b.n(gorgonia.Sum(x, 1)) }

// squashLayer is u = h(v) = σ(c·v) on a batch v (B, n), with the per-row
// log-determinant Σ_i log h'(v_i).
func (b *gb) squashLayer(v *gorgonia.Node, c float64) (u, ld *gorgonia.Node) {
	n := v.Shape()[1]
	cv := v
	if c != 1 { // the paper's scale is 1: no product, no constant term
		cv = b.n(gorgonia.Mul(v, b.scalar(c)))
	}
	u = b.n(gorgonia.Sigmoid(cv))
	l1 := b.n(ops.LogSigmoid(cv))
	l2 := b.n(ops.LogSigmoid(b.n(gorgonia.Neg(cv))))
	ld = b.rowSum(b.n(gorgonia.Add(l1, l2)))
	if c != 1 {
		ld = b.n(gorgonia.Add(ld, b.scalar(float64(n)*math.Log(c))))
	}
	return u, ld
}

// logitLayer is z = h⁻¹(y) = logit(y)/c on a batch y (B, n) in (0, 1),
// with the per-row log-determinant.
func (b *gb) logitLayer(y *gorgonia.Node, c float64) (z, ld *gorgonia.Node) {
	n := y.Shape()[1]
	ly := b.n(gorgonia.Log(y))
	l1y := b.n(gorgonia.Log1p(b.n(gorgonia.Neg(y))))
	z = b.n(gorgonia.Sub(ly, l1y))
	ld = b.n(gorgonia.Neg(b.rowSum(b.n(gorgonia.Add(ly, l1y)))))
	if c != 1 {
		z = b.n(gorgonia.Mul(z, b.scalar(1/c)))
		ld = b.n(gorgonia.Sub(ld, b.scalar(float64(n)*math.Log(c))))
	}
	return z, ld
}

// stdNormalRows is the per-row log-density of N(0, I) at the rows of z.
func (b *gb) stdNormalRows(z *gorgonia.Node) *gorgonia.Node {
	n := z.Shape()[1]
	sq := b.rowSum(b.n(gorgonia.Square(z)))
	return b.n(gorgonia.Sub(b.n(gorgonia.Mul(sq, b.scalar(-0.5))), b.scalar(float64(n)*halfLog2Pi)))
}

// prefixes returns the block-triangular masks of the stack's three MADE
// layers as MaskedLinear prefixes: hidden unit j sees inputs of index below
// its degree, and the units of degree at most its own; spline parameter q
// of coordinate i sees the units of degree at most i.
func (s *stack) prefixes() (p1, p2, p3 []int) {
	h := s.hidden
	deg := make([]int, h)
	for d := 0; d+1 < len(s.start); d++ {
		for j := s.start[d]; j < s.start[d+1]; j++ {
			deg[j] = d
		}
	}
	p1, p2, p3 = make([]int, h), make([]int, h), make([]int, s.out)
	for j, d := range deg {
		p1[j] = d
		p2[j] = s.start[d+1]
	}
	for q := range p3 {
		p3[q] = s.start[q/s.per+1]
	}
	return p1, p2, p3
}

// shared is the number of leading coordinates whose spline parameters are
// the same in every row: those fed by no hidden unit (their parameters are
// output biases), or all of them with one coordinate and no context.
func (s *stack) shared() int {
	if s.n == 1 && s.ctx == 0 {
		return 1
	}
	k := 0
	for k < s.n && s.start[k+1] == 0 {
		k++
	}
	return k
}

// graph adds the stack F to a graph for a batch u (B, n) in [0, 1], with
// the parameters at offset off of the flat parameter vector and the context
// ctx (B, ctx), nil without context. It returns F(u) and the per-row sum of
// the splines' log-derivatives.
func (s *stack) graph(b *gb, off int, u, ctx *gorgonia.Node) (y, ld *gorgonia.Node) {
	n, h := s.n, s.hidden
	rev := make([]int, n)
	for i := range rev {
		rev[i] = n - 1 - i
	}
	p1, p2, p3 := s.prefixes()
	spl := ops.SplineRows{Bins: s.bins, LogitScale: s.scale, Shared: s.shared()}
	for l := 0; l < s.layers && b.err == nil; l++ {
		q := off + l*s.size
		x := b.n(ops.PermuteColumns(u, rev))
		var c1, c2 []*gorgonia.Node
		if s.ctx > 0 {
			c1 = []*gorgonia.Node{ctx, b.view(q+s.oC1, h, s.ctx)}
			c2 = []*gorgonia.Node{ctx, b.view(q+s.oC2, h, s.ctx)}
		}
		if b.err != nil {
			break
		}
		in := x
		if s.n == 1 && s.ctx == 0 {
			// The masks cut the input off: the conditioner is the same for
			// every row, so one row of it serves the batch.
			in = Constant([]float64{0}, 1, 1)
		}
		h1 := b.n(ops.MaskedLinear(in, b.view(q+s.oW1, h, n), b.view(q+s.oB1, h), p1, ops.ReLU, c1...))
		if b.err != nil {
			break
		}
		h2 := b.n(ops.MaskedLinear(h1, b.view(q+s.oW2, h, h), b.view(q+s.oB2, h), p2, ops.ReLU, c2...))
		if b.err != nil {
			break
		}
		o := b.n(ops.MaskedLinear(h2, b.view(q+s.oW3, s.out, h), b.view(q+s.oB3, s.out), p3, ops.Identity))
		if b.err != nil {
			break
		}
		yl, ldl, err := ops.RQSplineRows(x, o, spl)
		b.n(nil, err)
		if b.err != nil {
			break
		}
		if ld == nil {
			ld = ldl
		} else {
			ld = b.n(gorgonia.Add(ld, ldl))
		}
		u = yl
	}
	return u, ld
}

// batchFlow is a flow's log-density on a batch of samples as a gorgonia
// graph, for training.
type batchFlow interface {
	// numParams is the length of the flat parameter vector.
	numParams() int
	// build adds to b the per-row log-density log q (rows) of a batch of
	// the given number of rows, its parameters taken with b.view, and
	// returns the data nodes that fill sets for each batch.
	build(b *gb, rows int) (logq *gorgonia.Node, data []*gorgonia.Node)
	// fill writes the data of sample rows idx into bufs, parallel to the
	// data nodes; rng supplies any per-batch randomness.
	fill(idx []int, rng randSource, bufs [][]float64)
}

// randSource is the part of *rand.Rand that batches use.
type randSource interface{ NormFloat64() float64 }

// cacheable is a batchFlow whose compiled loss depends only on its
// architecture (everything fit-specific is data filled with every batch),
// so that a TrainCache can hand it to another fit.
type cacheable interface {
	// cacheKey identifies the loss compiled for batches of rows rows.
	cacheKey(rows int) any
}

// trainKey is the architecture of a cached training loss.
type trainKey struct {
	kind   string
	n, ctx int
	cfg    RQMAConfig
	rows   int
}

// TrainCache keeps the compiled training losses of finished fits for later
// fits of the same architecture, which then skip compiling them: RQMA fits
// (FitRQMA) of one dimension and RQMAConfig share them, and conditional
// fits (FitConditionalRQMA) of one saturated dimension, context length and
// RQMAConfig. Compiling costs a few milliseconds and megabytes per batch
// size, a large share of a short fit of a small flow. Set
// TrainOptions.Cache to use one; it is safe for concurrent fits, holds what
// the most concurrent fits of an architecture used, and keeps it until it
// is dropped or Reset. The zero value is ready to use. Fits of flows
// written by users (FitGraph) compile their own.
type TrainCache struct {
	mu   sync.Mutex
	idle map[any][]*lossProgram
}

// NewTrainCache returns an empty cache.
func NewTrainCache() *TrainCache { return &TrainCache{} }

// Reset drops the programs the cache holds.
func (c *TrainCache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.idle = nil
}

// take returns an idle program of key k, or nil.
func (c *TrainCache) take(k any) *lossProgram {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := c.idle[k]
	if len(ps) == 0 {
		return nil
	}
	lp := ps[len(ps)-1]
	c.idle[k] = ps[:len(ps)-1]
	return lp
}

// put returns programs to the cache.
func (c *TrainCache) put(ps []*lossProgram) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle == nil {
		c.idle = make(map[any][]*lossProgram)
	}
	for _, lp := range ps {
		c.idle[lp.key] = append(c.idle[lp.key], lp)
	}
}

// lossProgram is the compiled minibatch loss −Σ_r w_r·log q(x_r) for one
// batch size, with buffers for its data. A batch of fewer rows is padded
// with copies of its first row of weight zero.
type lossProgram struct {
	prog *ad.Program
	key  any // the TrainCache key; nil when not cacheable
	data []*gorgonia.Node
	bufs [][]float64
	wts  *gorgonia.Node
	wbuf []float64
	gtmp []float64
	rows int
}

// compileLoss compiles the loss of f for batches of the given size.
func compileLoss(f batchFlow, rows int) (*lossProgram, error) {
	b := &gb{g: gorgonia.NewGraph()}
	logq, data := f.build(b, rows)
	wts := b.data("weights", nil, rows)
	var loss *gorgonia.Node
	if b.err == nil {
		loss = b.n(gorgonia.Neg(b.n(gorgonia.Sum(b.n(gorgonia.HadamardProd(logq, wts))))))
	}
	if b.err != nil {
		return nil, fmt.Errorf("flows: building the training graph: %w", b.err)
	}
	wrt, err := b.wrt(f.numParams())
	if err != nil {
		return nil, err
	}
	prog, err := ad.Compile(b.g, loss, wrt)
	if err != nil {
		return nil, fmt.Errorf("flows: compiling the training graph: %w", err)
	}
	if fb := prog.Fallbacks(); len(fb) > 0 {
		return nil, fmt.Errorf("flows: training graph runs ops through gorgonia: %v", fb)
	}
	lp := &lossProgram{prog: prog, data: data, wts: wts, rows: rows}
	if c, ok := f.(cacheable); ok {
		lp.key = c.cacheKey(rows)
	}
	for _, d := range data {
		lp.bufs = append(lp.bufs, make([]float64, d.Shape().TotalSize()))
	}
	lp.wbuf = make([]float64, rows)
	return lp, nil
}

// clone returns a copy with its own buffers, for another goroutine. lp
// must not be evaluating.
func (lp *lossProgram) clone() *lossProgram {
	c := *lp
	c.prog = lp.prog.Clone()
	c.bufs = make([][]float64, len(lp.bufs))
	for i, b := range lp.bufs {
		c.bufs[i] = make([]float64, len(b))
	}
	c.wbuf = make([]float64, lp.rows)
	c.gtmp = nil
	return &c
}

// eval binds a batch of at most lp.rows rows and evaluates the loss,
// writing its gradient into g (overwriting) when g is non-nil.
func (lp *lossProgram) eval(f batchFlow, p []float64, idx []int, wts []float64, rng randSource, g []float64) (float64, error) {
	f.fill(idx, rng, lp.bufs)
	if m := len(idx); m < lp.rows {
		// Pad with copies of the first row, of weight zero: their terms
		// and gradients are exact zeros.
		for _, buf := range lp.bufs {
			w := len(buf) / lp.rows
			for k := m; k < lp.rows; k++ {
				copy(buf[k*w:(k+1)*w], buf[:w])
			}
		}
	}
	for i, d := range lp.data {
		if err := lp.prog.Bind(d, lp.bufs[i]); err != nil {
			return 0, err
		}
	}
	m := copy(lp.wbuf, wts)
	if wts == nil {
		m = len(idx)
		for k := range m {
			lp.wbuf[k] = 1
		}
	}
	clear(lp.wbuf[m:])
	if err := lp.prog.Bind(lp.wts, lp.wbuf); err != nil {
		return 0, err
	}
	var v float64
	var err error
	if g != nil {
		v, err = lp.prog.LogDensityGradInPlace(p, g)
	} else {
		v, err = lp.prog.LogDensity(p)
	}
	if errors.Is(err, ad.ErrNonFinite) {
		return math.NaN(), nil // a skipped step, as the trainer decides
	}
	return v, err
}

// graphLearner trains a batchFlow. Its compiled losses come from the
// TrainCache, if any, or are compiled on first use of a batch size
// together with a clone per other worker, all made before any of them
// evaluates; each worker owns one program per batch size it uses.
type graphLearner struct {
	f      batchFlow
	p      []float64
	spans  [][2]int
	cache  *TrainCache
	nw     int
	mu     sync.Mutex
	spare  map[int][]*lossProgram // compiled for a worker that has not asked yet
	issued []*lossProgram
}

func newGraphLearner(f batchFlow, p []float64, spans [][2]int) *graphLearner {
	return &graphLearner{f: f, p: p, spans: spans, nw: 1, spare: make(map[int][]*lossProgram)}
}

func (l *graphLearner) params() []float64   { return l.p }
func (l *graphLearner) freeSpans() [][2]int { return l.spans }
func (l *graphLearner) newWorker() worker {
	return &graphWorker{l: l, progs: make(map[int]*lossProgram)}
}

// setup tells the learner the number of workers and the cache to use.
func (l *graphLearner) setup(workers int, cache *TrainCache) {
	l.nw, l.cache = max(workers, 1), cache
}

// release hands the learner's programs to the cache, if any.
func (l *graphLearner) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cache != nil && len(l.issued) > 0 && l.issued[0].key != nil {
		all := l.issued
		for _, ps := range l.spare {
			all = append(all, ps...)
		}
		l.cache.put(all)
	}
	l.issued, l.spare = nil, nil
}

// program returns a program of its own for batches of the given size to a
// worker that has none.
func (l *graphLearner) program(rows int) (*lossProgram, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.spare == nil {
		l.spare = make(map[int][]*lossProgram)
	}
	ps := l.spare[rows]
	if len(ps) == 0 {
		var lp *lossProgram
		if c, ok := l.f.(cacheable); ok && l.cache != nil {
			lp = l.cache.take(c.cacheKey(rows))
		}
		if lp == nil {
			var err error
			if lp, err = compileLoss(l.f, rows); err != nil {
				return nil, err
			}
			// Clones for the other workers now, while lp is idle.
			for range l.nw - 1 {
				ps = append(ps, lp.clone())
			}
		}
		ps = append(ps, lp)
	}
	lp := ps[len(ps)-1]
	l.spare[rows] = ps[:len(ps)-1]
	l.issued = append(l.issued, lp)
	return lp, nil
}

// padRows is the batch size compiled for a chunk of rows rows: a multiple
// of 16 (8 for the smallest), so that odd chunk sizes share programs.
func padRows(rows int) int {
	if rows <= 8 {
		return 8
	}
	return (rows + 15) / 16 * 16
}

type graphWorker struct {
	l     *graphLearner
	progs map[int]*lossProgram
}

// get returns the worker's program for a chunk of rows rows: for
// evaluations without a gradient (validation) the smallest program it
// already has that fits, else one compiled for padRows(rows).
func (k *graphWorker) get(rows int, grad bool) (*lossProgram, error) {
	size := padRows(rows)
	if lp, ok := k.progs[size]; ok {
		return lp, nil
	}
	if !grad {
		var best *lossProgram
		for s, lp := range k.progs {
			if s >= rows && (best == nil || s < best.rows) {
				best = lp
			}
		}
		if best != nil {
			return best, nil
		}
	}
	lp, err := k.l.program(size)
	if err != nil {
		return nil, err
	}
	k.progs[size] = lp
	return lp, nil
}

func (k *graphWorker) batch(p []float64, idx []int, wts []float64, rng randSource, g []float64) (float64, error) {
	tot := 0.0
	for lo := 0; lo < len(idx); lo += workerRows {
		hi := min(lo+workerRows, len(idx))
		lp, err := k.get(hi-lo, g != nil)
		if err != nil {
			return math.NaN(), err
		}
		var wc []float64
		if wts != nil {
			wc = wts[lo:hi]
		}
		var gc []float64
		if g != nil {
			if lo == 0 {
				gc = g // overwritten
			} else {
				if lp.gtmp == nil {
					lp.gtmp = make([]float64, len(p))
				}
				gc = lp.gtmp
			}
		}
		v, err := lp.eval(k.l.f, p, idx[lo:hi], wc, rng, gc)
		if err != nil {
			return math.NaN(), err
		}
		tot += v
		if g != nil && lo > 0 {
			for _, sp := range k.l.spans {
				for i := sp[0]; i < sp[1]; i++ {
					g[i] += gc[i]
				}
			}
		}
	}
	return tot, nil
}
