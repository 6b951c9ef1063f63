package ad

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/internal/gemm"
)

// Program is a compiled log-density: its value, its gradient with respect to
// the wrt nodes given to Compile, and optionally extra output nodes, all
// evaluated by a flat list of native kernels on pre-allocated buffers.
//
// Concurrency has one rule, whatever the program: a Program owns scratch
// buffers and must not be used by two goroutines at once. Give each
// goroutine its own copy with Clone; clones share the compiled
// instructions, which are immutable, and nothing else. A call (LogDensity,
// LogDensityGrad, LogDensityGradInPlace, Outputs, Bind) that starts while
// another is running on the same Program returns ErrConcurrentUse instead
// of a value computed on buffers the other is overwriting.
type Program struct {
	code *code

	arena   []float64   // every node's value but the io region's, one contiguous allocation
	io      []float64   // the io region (see frontLayout), nil until needed
	slots   [][]float64 // per-node views into arena
	kernels []Kernel    // per-clone kernels of Lowerer ops
	kin     [][][]float64
	scratch []float64   // shared by the Scratcher kernels
	inplace *inplace    // LogDensityGradInPlace's bindings, see inplace.go
	busy    atomic.Bool // set while a call uses the buffers
	// dense says that Bind gave a matrix of code.picked a value other
	// than its compiled selection: its products multiply again.
	dense bool
}

// ErrConcurrentUse is returned when a Program is called by a goroutine
// while another is evaluating it: each goroutine needs its own Clone.
var ErrConcurrentUse = errors.New("ad: Program used by two goroutines at once; give each goroutine its own Clone")

// acquire marks p busy, or reports that another call holds it. The cost
// is one uncontended atomic operation per evaluation.
func (p *Program) acquire() error {
	if !p.busy.CompareAndSwap(false, true) {
		return ErrConcurrentUse
	}
	return nil
}

func (p *Program) release() { p.busy.Store(false) }

// code is the immutable result of compilation, shared between clones.
type code struct {
	dim       int
	wrt       []int // slots of wrt nodes, in order
	outSlot   int
	gradSlots []int // gradient slots, parallel to wrt
	extra     []int // slots of WithOutputs nodes
	extraDim  int

	slotOff, slotLen []int
	arenaLen         int
	init             []float64 // initial arena contents: constants and data

	// ioOff is where the io region starts: [ioOff, arenaLen) holds wrt
	// and gradient buffers that a Program allocates only when it copies x
	// in, or at once when ioEager (see frontLayout).
	ioOff   int
	ioEager bool

	// inplace is LogDensityGradInPlace's plan, unbound, copied by each
	// Program (nil: planned on first use).
	inplace *inplace

	data map[*gorgonia.Node]int // data node -> slot, for Bind
	// picked holds the data slots whose selection matrices became picks
	// (see selectionPick).
	picked map[int]bool

	value, full, outputs []instr // instruction lists for each entry point

	// chkSlot is a one-element scratch slot that fused ops set to 1 when
	// they write a non-finite gradient value; gradChecked says that they
	// check every gradient slot, so LogDensityGrad reads it instead of
	// scanning the gradient (see markGradChecks).
	chkSlot     int
	gradChecked bool

	shared    map[int][]float64 // WithSharedData slots: the caller's arrays
	kernels   []Kernel          // prototypes of lowered custom kernels
	scratch   []bool            // kernels implementing Scratcher
	scratchN  int               // the largest ScratchLen of those
	kernArgs  [][]int           // input slots of each kernel
	fallbacks []string
}

type instrKind uint8

const (
	kUnary instrKind = iota
	kBinary
	kGather
	kSumAll
	kSumIndex
	kMaxIndex
	kGemm
	kGemv
	kDot
	kOuter
	kBatchGemm
	kByIndex
	kByIndexGrad
	kSoftmax
	kSoftmaxGrad
	kAccum
	kKernel
	kFallback
	kFused
)

// instr is one lowered node. Fields are used according to kind; keeping one
// struct rather than an interface keeps dispatch a single switch.
type instr struct {
	kind   instrKind
	out    int
	args   []int
	unary  unaryFunc
	bop    binaryOp // kBinary
	segs   []segment
	index  []int32 // reductions: output position of each input element
	la     linalg
	sel    selection   // kByIndex, kByIndexGrad, kSoftmax, kSoftmaxGrad
	isLog  bool        // kSoftmax, kSoftmaxGrad: log-softmax
	terms  []accumTerm // kAccum: one per argument
	kernel int         // kKernel: index into Program.kernels
	fb     *fallback
	name   string      // op description for error messages, or
	op     gorgonia.Op // the op, described when needed (see label)

	sym     string // kUnary, kBinary: the op's name or symbol, for fusion
	variant uint8  // kBinary: 0 tensor–tensor, 1 scalar–tensor, 2 tensor–scalar
	fz      []fop  // kFused: the fused instructions, see fuse.go

	// pick, for a kGemv by a selection matrix, is the element of the
	// vector each output copies, −1 for zero (see selectionPick). It
	// gives the product's values exactly for finite vectors but for the
	// sign of zeros (a copied −0 stays −0, where the sum with the 0·x
	// terms gives +0); a non-finite element reaches only the outputs
	// copying it, where 0·Inf made every output NaN.
	pick []int32

	// acc, for a kGemm, says that out already holds an addend, written by
	// an earlier instruction, and the product is added to it (see
	// accumulateProducts); out is then also the product's last argument.
	acc bool
	// scale, for a kGemm, is the product's multiplier alpha; 0 means 1
	// (see mergeSymmetricProducts).
	scale float64
}

// label describes the instruction's op, for error messages.
func (ins *instr) label() string {
	if ins.name == "" && ins.op != nil {
		return fmt.Sprint(ins.op)
	}
	return ins.name
}

// segment is a run of a gather: out[at+i] = in[src+i*stride] for i < n,
// with arg < 0 meaning the run is zero.
type segment struct {
	at, n, arg, src, stride int
}

// linalg holds the BLAS shapes of a matrix op, fixed at compile time.
type linalg struct {
	tA, tB         blas.Transpose
	ar, ac, br, bc int // stored shapes of the two operands
	m, n           int // output rows, cols
	batch          int
}

// selection describes gorgonia's ByIndices along one axis of a tensor
// viewed as outer × n × inner: m indices pick blocks of inner elements.
type selection struct {
	outer, n, inner, m int
}

// Dim returns the total size of the wrt nodes: the length of x and of the
// gradient.
func (p *Program) Dim() int { return p.code.dim }

// Fallbacks lists the ops that run through gorgonia's Do on the slow,
// allocating path, each with the number of nodes using it. An empty result
// means the whole program runs natively.
func (p *Program) Fallbacks() []string {
	return append([]string(nil), p.code.fallbacks...)
}

// LogDensity evaluates the compiled output node at x.
func (p *Program) LogDensity(x []float64) (float64, error) {
	if p.code.outSlot < 0 {
		return math.NaN(), errNoOutput
	}
	if err := p.acquire(); err != nil {
		return math.NaN(), err
	}
	defer p.release()
	if err := p.load(x); err != nil {
		return math.NaN(), err
	}
	if err := p.exec(p.code.value); err != nil {
		return math.NaN(), err
	}
	v := p.slots[p.code.outSlot][0]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v, fmt.Errorf("%w: log-density is %v", ErrNonFinite, v)
	}
	return v, nil
}

// LogDensityGrad evaluates the output node at x and writes its gradient
// with respect to the wrt nodes into grad, laid out as x. It does not
// allocate unless the program has fallbacks (or, once, on its first call).
// When it returns an error, grad's contents are unspecified.
func (p *Program) LogDensityGrad(x, grad []float64) (float64, error) {
	c := p.code
	if c.outSlot < 0 {
		return math.NaN(), errNoOutput
	}
	if len(grad) != c.dim {
		return math.NaN(), fmt.Errorf("ad: gradient has length %d, want %d", len(grad), c.dim)
	}
	if !p.busy.CompareAndSwap(false, true) {
		return math.NaN(), ErrConcurrentUse
	}
	// The release is written out at each return rather than deferred: this
	// is the entry point of every sampler step, and small models spend
	// more time here than in their arithmetic.
	v, err := p.logDensityGrad(x, grad)
	p.busy.Store(false)
	return v, err
}

// logDensityGrad is LogDensityGrad once p is acquired and grad's length
// checked.
func (p *Program) logDensityGrad(x, grad []float64) (float64, error) {
	c := p.code
	st := p.inplace
	// Reading x and writing the gradient where they are, as
	// LogDensityGradInPlace does, saves two copies. Buffers bound by an
	// earlier call were checked then: same first elements and lengths
	// mean the same verdict.
	inPlace := st != nil && st.ok && len(x) == c.dim && c.dim > 0 &&
		(&x[0] == st.x && &grad[0] == st.g || !overlap(x, grad) && p.bindInplace(x, grad))
	if !inPlace {
		if err := p.load(x); err != nil {
			return math.NaN(), err
		}
	}
	if err := p.exec(c.full); err != nil {
		return math.NaN(), err
	}
	if !inPlace {
		g := grad
		for _, s := range c.gradSlots {
			n := copy(g, p.slots[s])
			g = g[n:]
		}
	}
	v := p.slots[c.outSlot][0]
	if v-v != 0 { // NaN or ±Inf
		return v, fmt.Errorf("%w: log-density is %v", ErrNonFinite, v)
	}
	// The check slot is 0 unless an op has written a non-finite gradient
	// value since it was last cleared (below, or by an earlier call that
	// returned early, which at worst costs this call a scan of grad).
	if c.gradChecked && p.slots[c.chkSlot][0] != 0 || !c.gradChecked && !allFinite(grad) {
		if c.gradChecked {
			p.slots[c.chkSlot][0] = 0
		}
		for i, gi := range grad {
			if math.IsNaN(gi) || math.IsInf(gi, 0) {
				return v, fmt.Errorf("%w: gradient[%d] is %v", ErrNonFinite, i, gi)
			}
		}
	}
	return v, nil
}

// Outputs evaluates the WithOutputs nodes at x and writes their values,
// flattened row-major and concatenated in order, into dst.
func (p *Program) Outputs(x, dst []float64) error {
	if len(dst) != p.code.extraDim {
		return fmt.Errorf("ad: outputs destination has length %d, want %d", len(dst), p.code.extraDim)
	}
	if err := p.acquire(); err != nil {
		return err
	}
	defer p.release()
	if err := p.load(x); err != nil {
		return err
	}
	if err := p.exec(p.code.outputs); err != nil {
		return err
	}
	d := dst
	for _, s := range p.code.extra {
		n := copy(d, p.slots[s])
		d = d[n:]
	}
	return nil
}

// Bind replaces the values of data node with v, flattened row-major; v must
// have the node's size. Integer (index) nodes take their indices as
// float64s. Only this Program, not its clones, sees the change.
func (p *Program) Bind(data *gorgonia.Node, v []float64) error {
	if data == nil {
		return errors.New("ad: Bind of a nil node")
	}
	s, ok := p.code.data[data]
	if !ok {
		return fmt.Errorf("ad: node %q is not a data node used by this program", data.Name())
	}
	if _, sh := p.code.shared[s]; sh {
		return fmt.Errorf("ad: node %q is shared data (WithSharedData): change its array instead of binding", data.Name())
	}
	if len(v) != len(p.slots[s]) {
		return fmt.Errorf("ad: Bind %q: got %d values, want %d (shape %v)", data.Name(), len(v), len(p.slots[s]), data.Shape())
	}
	if err := p.acquire(); err != nil {
		return err
	}
	defer p.release()
	if p.code.picked[s] && !p.dense && !slices.Equal(p.slots[s], v) {
		p.dense = true
	}
	copy(p.slots[s], v)
	return nil
}

// Clone returns a Program that shares p's compiled instructions but owns its
// buffers, starting from p's current data bindings. Use one clone per
// goroutine, made before the goroutines start: Clone reads p's buffers, so
// it must not run while p itself is evaluating. Custom kernels implementing
// Cloner are cloned too; others are assumed stateless and shared.
func (p *Program) Clone() *Program {
	q := &Program{code: p.code, arena: append([]float64(nil), p.arena...), dense: p.dense}
	q.copyPlan()
	if p.code.ioEager {
		q.io = append([]float64(nil), p.io...)
	}
	q.kernels = make([]Kernel, len(p.kernels))
	for i, k := range p.kernels {
		if c, ok := k.(Cloner); ok {
			q.kernels[i] = c.CloneKernel()
		} else {
			q.kernels[i] = k
		}
	}
	q.wire()
	return q
}

// newProgram builds the first Program of a compiled code on arena, its
// initial state, which it owns.
func newProgram(c *code, arena []float64) *Program {
	p := &Program{code: c, arena: arena}
	p.copyPlan()
	if c.ioEager {
		p.io = make([]float64, c.arenaLen-c.ioOff)
	}
	p.kernels = append([]Kernel(nil), c.kernels...)
	p.wire()
	return p
}

// copyPlan gives p its copy of the compiled in-place plan, if any.
func (p *Program) copyPlan() {
	if pl := p.code.inplace; pl != nil {
		cp := *pl
		p.inplace = &cp
	}
}

// wire points slot views and kernel argument lists into this Program's
// arena, so that evaluation indexes pre-built slices and never allocates.
func (p *Program) wire() {
	c := p.code
	p.scratch = make([]float64, c.scratchN)
	p.slots = make([][]float64, len(c.slotOff))
	for i := range c.slotOff {
		p.slots[i] = p.slotView(i)
	}
	p.kin = make([][][]float64, len(c.kernArgs))
	for i, args := range c.kernArgs {
		in := make([][]float64, len(args))
		for j, s := range args {
			in[j] = p.slots[s]
		}
		p.kin[i] = in
	}
}

// slotView is slot i's buffer: a view of the arena or of the io region,
// or the caller's array of a WithSharedData node. It is nil for a slot of
// the io region before that is allocated, and for a slot beyond the
// arena of the program folding constants at compile time.
func (p *Program) slotView(i int) []float64 {
	c := p.code
	if v, ok := c.shared[i]; ok {
		return v[:len(v):len(v)]
	}
	off, n := c.slotOff[i], c.slotLen[i]
	a := p.arena
	if off >= c.ioOff && n > 0 {
		a, off = p.io, off-c.ioOff
	}
	if off+n > len(a) {
		return nil
	}
	return a[off : off+n : off+n]
}

// ensureIO allocates the io region if it is not yet, pointing its slots
// and the kernel arguments using them into it.
func (p *Program) ensureIO() {
	c := p.code
	if p.io != nil || c.arenaLen == c.ioOff {
		return
	}
	p.io = make([]float64, c.arenaLen-c.ioOff)
	for i := range c.slotOff {
		p.slots[i] = p.slotView(i)
	}
	for i, args := range c.kernArgs {
		for j, s := range args {
			p.kin[i][j] = p.slots[s]
		}
	}
	if p.inplace != nil {
		p.inplace.x, p.inplace.g = nil, nil
	}
}

// load copies x into the wrt nodes' buffers.
func (p *Program) load(x []float64) error {
	p.unbindInplace()
	p.ensureIO()
	if len(x) != p.code.dim {
		return fmt.Errorf("ad: input has length %d, want %d", len(x), p.code.dim)
	}
	for _, s := range p.code.wrt {
		n := copy(p.slots[s], x)
		x = x[n:]
	}
	return nil
}

// exec executes an instruction list: a list of one fused instruction
// (a tiny program, all elementwise ops and full reductions, our own loops
// with no custom kernel) directly, any other through run.
func (p *Program) exec(code []instr) error {
	if len(code) == 1 && code[0].kind == kFused {
		runFused(p.slots, code[0].fz, p.code.chkSlot)
		return nil
	}
	return p.run(code)
}

// run executes an instruction list. A panic in a kernel (a custom Kernel
// with a bug, say) becomes an error naming the instruction, so that a
// sampler sees a rejected proposal rather than a crash.
func (p *Program) run(code []instr) (err error) {
	i := 0
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ad: panic in %s: %v", code[i].label(), r)
		}
	}()
	s := p.slots
	for i = range code {
		ins := &code[i]
		out := s[ins.out]
		switch ins.kind {
		case kUnary:
			ins.unary(out, s[ins.args[0]])
		case kBinary:
			binaryLoop(ins.bop, out, s[ins.args[0]], s[ins.args[1]], ins.variant == 1, ins.variant == 2)
		case kGather:
			gather(out, s, ins)
		case kSumAll:
			out[0] = floats.Sum(s[ins.args[0]])
		case kSumIndex:
			clear(out)
			in := s[ins.args[0]]
			for j, k := range ins.index[:len(in)] {
				out[k] += in[j]
			}
		case kMaxIndex:
			for j := range out {
				out[j] = math.Inf(-1)
			}
			in := s[ins.args[0]]
			for j, k := range ins.index[:len(in)] {
				if v := in[j]; v > out[k] || math.IsNaN(v) {
					out[k] = v
				}
			}
		case kGemm:
			beta := 0.0
			if ins.acc {
				beta = 1
			}
			alpha := 1.0
			if ins.scale != 0 {
				alpha = ins.scale
			}
			matMul(&ins.la, alpha, s[ins.args[0]], s[ins.args[1]], beta, out, p.scratch)
		case kBatchGemm:
			l := &ins.la
			a, b := s[ins.args[0]], s[ins.args[1]]
			na, nb, nc := l.ar*l.ac, l.br*l.bc, l.m*l.n
			for j := 0; j < l.batch; j++ {
				matMul(l, 1, a[j*na:(j+1)*na], b[j*nb:(j+1)*nb], 0, out[j*nc:(j+1)*nc], p.scratch)
			}
		case kGemv:
			if ins.pick != nil && !p.dense {
				x := s[ins.args[1]]
				for j, k := range ins.pick[:len(out)] {
					if k < 0 {
						out[j] = 0
					} else {
						out[j] = x[k]
					}
				}
				break
			}
			l := &ins.la
			x := s[ins.args[1]]
			blas64.Gemv(l.tA, 1,
				blas64.General{Rows: l.ar, Cols: l.ac, Stride: l.ac, Data: s[ins.args[0]]},
				blas64.Vector{N: len(x), Inc: 1, Data: x},
				0, blas64.Vector{N: len(out), Inc: 1, Data: out})
		case kDot:
			a := s[ins.args[0]]
			out[0] = blas64.Dot(blas64.Vector{N: len(a), Inc: 1, Data: a},
				blas64.Vector{N: len(a), Inc: 1, Data: s[ins.args[1]]})
		case kOuter:
			a, b := s[ins.args[0]], s[ins.args[1]]
			nb := len(b)
			for j, av := range a {
				row := out[j*nb : (j+1)*nb]
				for k, bv := range b {
					row[k] = av * bv
				}
			}
		case kByIndex:
			if err := byIndex(out, s[ins.args[0]], s[ins.args[1]], ins.sel, false); err != nil {
				return err
			}
		case kByIndexGrad:
			clear(out)
			if err := byIndex(s[ins.args[1]], out, s[ins.args[2]], ins.sel, true); err != nil {
				return err
			}
		case kSoftmax:
			softmax(out, s[ins.args[0]], ins.sel, ins.isLog)
		case kSoftmaxGrad:
			softmaxGrad(out, s[ins.args[1]], s[ins.args[2]], ins.sel, ins.isLog)
		case kAccum:
			accumulate(out, s, ins)
		case kKernel:
			var err error
			if k := ins.kernel; p.code.scratch[k] {
				err = p.kernels[k].(Scratcher).EvalScratch(out, p.kin[k], p.scratch)
			} else {
				err = p.kernels[k].Eval(out, p.kin[k])
			}
			if err != nil {
				return fmt.Errorf("ad: %s: %w", ins.label(), err)
			}
		case kFallback:
			if err := ins.fb.eval(out, s, ins.args); err != nil {
				return err
			}
		case kFused:
			runFused(s, ins.fz, p.code.chkSlot)
		}
	}
	return nil
}

// gather executes a data-movement instruction (reshape, slice, transpose,
// concat, repeat, slice-increment) from its compiled segments.
func gather(out []float64, s [][]float64, ins *instr) {
	for _, sg := range ins.segs {
		dst := out[sg.at : sg.at+sg.n]
		if sg.arg < 0 {
			clear(dst)
			continue
		}
		in := s[ins.args[sg.arg]]
		switch sg.stride {
		case 1:
			copy(dst, in[sg.src:sg.src+sg.n])
		case 0:
			v := in[sg.src]
			for j := range dst {
				dst[j] = v
			}
		default:
			k := sg.src
			for j := range dst {
				dst[j] = in[k]
				k += sg.stride
			}
		}
	}
}

// byIndex copies the selected blocks of x into sel (scatter false), or adds
// the blocks of sel into x at the selected positions (scatter true, the
// gradient). Indices are stored as float64 and checked on every use, since
// Bind may replace them.
func byIndex(sel, x, idx []float64, sh selection, scatter bool) error {
	in := sh.inner
	for j, f := range idx[:sh.m] {
		k := int(f)
		if float64(k) != f || k < 0 || k >= sh.n {
			return fmt.Errorf("ad: ByIndices: index[%d] = %v out of range [0, %d)", j, f, sh.n)
		}
		for o := 0; o < sh.outer; o++ {
			dst := sel[(o*sh.m+j)*in : (o*sh.m+j+1)*in]
			src := x[(o*sh.n+k)*in : (o*sh.n+k+1)*in]
			if scatter {
				for i, v := range dst {
					src[i] += v
				}
			} else {
				copy(dst, src)
			}
		}
	}
	return nil
}

// softmax computes (log-)softmax of x along the middle axis of the
// outer × n × inner view sh, shifting by the maximum for stability.
func softmax(y, x []float64, sh selection, isLog bool) {
	n, in := sh.n, sh.inner
	for o := 0; o < sh.outer; o++ {
		base := o * n * in
		for i := 0; i < in; i++ {
			mx := math.Inf(-1)
			for k := 0; k < n; k++ {
				mx = math.Max(mx, x[base+k*in+i])
			}
			var z float64
			for k := 0; k < n; k++ {
				e := math.Exp(x[base+k*in+i] - mx)
				y[base+k*in+i] = e
				z += e
			}
			if isLog {
				lz := mx + math.Log(z)
				for k := 0; k < n; k++ {
					j := base + k*in + i
					y[j] = x[j] - lz
				}
			} else {
				for k := 0; k < n; k++ {
					y[base+k*in+i] /= z
				}
			}
		}
	}
}

// softmaxGrad is the vector–Jacobian product of (log-)softmax given its
// output y and the incoming gradient g: y⊙(g − Σ g⊙y) for softmax and
// g − exp(y)·Σ g for log-softmax, sums along the softmax axis.
func softmaxGrad(dx, y, g []float64, sh selection, isLog bool) {
	n, in := sh.n, sh.inner
	for o := 0; o < sh.outer; o++ {
		base := o * n * in
		for i := 0; i < in; i++ {
			var s float64
			for k := 0; k < n; k++ {
				j := base + k*in + i
				if isLog {
					s += g[j]
				} else {
					s += g[j] * y[j]
				}
			}
			for k := 0; k < n; k++ {
				j := base + k*in + i
				if isLog {
					dx[j] = g[j] - math.Exp(y[j])*s
				} else {
					dx[j] = y[j] * (g[j] - s)
				}
			}
		}
	}
}

// inner returns the inner dimension of the product.
func (l *linalg) inner() int {
	if l.tA == blas.Trans {
		return l.ar
	}
	return l.ac
}

// matMul computes out = alpha·op(a)·op(b) + beta·out by internal/gemm, serially: gonum's
// Dgemm goes parallel for large outputs, which allocates and competes with
// the sampler's own per-chain goroutines, and its serial path is slower.
// work is the Program's scratch, at least gemm.WorkLen(l.inner()) long.
func matMul(l *linalg, alpha float64, a, b []float64, beta float64, out, work []float64) {
	gemm.Dgemm(l.tA, l.tB, l.m, l.n, l.inner(), alpha, a, l.ac, b, l.bc, beta, out, l.n, work)
}

// overlap reports whether two non-empty slices share memory.
func overlap(a, b []float64) bool {
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b))*8 && pb < pa+uintptr(len(a))*8
}

// allFinite reports whether no element of xs is NaN or infinite. x*0 is 0
// for finite x and NaN otherwise, so a sum of them detects any bad element;
// four accumulators keep the additions from forming one long dependency
// chain.
func allFinite(xs []float64) bool {
	var z0, z1, z2, z3 float64
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		z0 += xs[i] * 0
		z1 += xs[i+1] * 0
		z2 += xs[i+2] * 0
		z3 += xs[i+3] * 0
	}
	for ; i < len(xs); i++ {
		z0 += xs[i] * 0
	}
	return z0+z1+z2+z3 == 0
}
