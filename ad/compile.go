package ad

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/internal/gemm"
)

// gradMu serialises gorgonia.Grad: its derivatives take package-level
// constant nodes of gorgonia (getConst's "one", "two", …) whose hash is
// cached on first use, so two graphs differentiated at once race on it (the
// race detector caught flows fitting on two workers). Compiles run at once
// otherwise; only the symbolic differentiation waits.
var gradMu sync.Mutex

// Option configures Compile.
type Option func(*config)

type config struct {
	outputs []*gorgonia.Node
	shared  map[*gorgonia.Node]bool
	noFuse  bool // tests: keep one instruction per node (see fuse.go)
	noPack  bool // tests: give every buffer its own arena range (see pack.go)
	noFold  bool // tests: keep transposes around products (see transpose.go)
	noAccum bool // tests: keep sums of products (see gemmacc.go)
	// tests: called with each entry point's list before the rewrites of
	// sums of products, to compare them with a reference
	checkRewrites func(c *code, list []instr, liveOut []int) error
	// tests: called with the layout pack is about to apply
	checkPack func(b *builder, newOff []int)
}

// WithOutputs adds nodes whose values Program.Outputs returns, flattened
// row-major and concatenated in the given order. Typical uses are
// transformed parameters and generated quantities.
func WithOutputs(nodes ...*gorgonia.Node) Option {
	return func(c *config) { c.outputs = append(c.outputs, nodes...) }
}

// Compile differentiates the scalar node out of graph g with respect to the
// input nodes wrt (gorgonia.Grad adds the gradient nodes to g) and lowers
// every node needed for the value, the gradient and any WithOutputs nodes to
// native kernels.
//
// The wrt nodes are the parameters: Program inputs are their values,
// flattened row-major and concatenated in order. Every other input node
// needed must hold a value (data); it is copied in now and can be replaced
// later with Program.Bind. Compile mutates g (it adds gradient nodes), so do
// not compile the same graph from several goroutines at once.
func Compile(g *gorgonia.ExprGraph, out *gorgonia.Node, wrt []*gorgonia.Node, opts ...Option) (prog *Program, err error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if g == nil || out == nil {
		return nil, errors.New("ad: Compile needs a graph and an output node")
	}
	if err := checkMember(g, out, "output"); err != nil {
		return nil, err
	}
	if !out.IsScalar() {
		return nil, fmt.Errorf("ad: output node %q has shape %v, want a scalar", out.Name(), out.Shape())
	}
	if out.Dtype() != tensor.Float64 {
		return nil, fmt.Errorf("ad: output node %q has dtype %v, want float64", out.Name(), out.Dtype())
	}
	return compile(g, out, wrt, cfg)
}

// compile is Compile without the checks of out; a nil out compiles the
// WithOutputs nodes alone, without differentiating.
func compile(g *gorgonia.ExprGraph, out *gorgonia.Node, wrt []*gorgonia.Node, cfg config) (prog *Program, err error) {
	seen, err := checkInputs(g, wrt, cfg)
	if err != nil {
		return nil, err
	}

	// gorgonia's symbolic differentiation and op methods panic on some bad
	// graphs; surface those as errors.
	defer func() {
		if r := recover(); r != nil {
			prog, err = nil, fmt.Errorf("ad: compile: %v", r)
		}
	}()

	if err := checkSliceHashes(g, append([]*gorgonia.Node{out}, cfg.outputs...)); err != nil {
		return nil, err
	}
	var grads gorgonia.Nodes
	if out != nil {
		gradMu.Lock()
		grads, err = gorgonia.Grad(out, wrt...)
		gradMu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("ad: differentiating %q: %w", out.Name(), err)
		}
		for i, gn := range grads {
			if size(gn.Shape()) != size(wrt[i].Shape()) {
				return nil, fmt.Errorf("ad: gradient of wrt[%d] %q has shape %v, want %v", i, wrt[i].Name(), gn.Shape(), wrt[i].Shape())
			}
		}
	}

	sorted, err := gorgonia.Sort(g)
	if err != nil {
		return nil, fmt.Errorf("ad: sorting graph: %w", err)
	}

	nn := len(sorted)
	b := &builder{g: g, slot: make(map[*gorgonia.Node]int, nn), wrt: seen, nodes: nn,
		kids:   make(map[*gorgonia.Node][]*gorgonia.Node, nn),
		c:      &code{data: make(map[*gorgonia.Node]int), picked: make(map[int]bool)},
		consts: make(map[int][]float64), isConst: make(map[int]bool),
		accum: make(map[*gorgonia.Node]*accumPlan), absorbed: make(map[*gorgonia.Node]bool),
		shared: cfg.shared, viewOf: make(map[int]int), transposes: make(map[int]transposeOf)}

	var roots []*gorgonia.Node
	if out != nil {
		roots = append(roots, out)
	}
	roots = append(append(roots, grads...), cfg.outputs...)
	if err := b.lowerAll(sorted, roots, wrt); err != nil {
		return nil, err
	}
	b.entryPoints(out, wrt, grads, cfg)
	return b.finish(out != nil, cfg)
}

// checkInputs checks the wrt and WithOutputs nodes and returns the set of
// wrt nodes.
func checkInputs(g *gorgonia.ExprGraph, wrt []*gorgonia.Node, cfg config) (map[*gorgonia.Node]bool, error) {
	if len(wrt) == 0 {
		return nil, errors.New("ad: Compile needs at least one wrt node")
	}
	seen := make(map[*gorgonia.Node]bool, len(wrt))
	for i, n := range wrt {
		if err := checkMember(g, n, fmt.Sprintf("wrt[%d]", i)); err != nil {
			return nil, err
		}
		if n.Op() != nil {
			return nil, fmt.Errorf("ad: wrt[%d] %q is not an input node", i, n.Name())
		}
		if n.Dtype() != tensor.Float64 {
			return nil, fmt.Errorf("ad: wrt[%d] %q has dtype %v, want float64", i, n.Name(), n.Dtype())
		}
		if seen[n] {
			return nil, fmt.Errorf("ad: wrt[%d] %q appears twice", i, n.Name())
		}
		seen[n] = true
	}
	for i, n := range cfg.outputs {
		if err := checkMember(g, n, fmt.Sprintf("WithOutputs[%d]", i)); err != nil {
			return nil, err
		}
	}
	return seen, nil
}

// lowerAll lowers, producers first, every node of sorted (gorgonia.Sort's
// order) that roots need, and the wrt nodes.
func (b *builder) lowerAll(sorted, roots, wrt []*gorgonia.Node) error {
	needed := b.ancestors(roots)
	for _, n := range wrt {
		needed[n] = true // a wrt node may be unused by the value; it still has a slot
	}
	// gorgonia.Sort puts consumers first; evaluation runs producers first.
	var order []*gorgonia.Node
	for i := len(sorted) - 1; i >= 0; i-- {
		if needed[sorted[i]] {
			order = append(order, sorted[i])
		}
	}
	pinned := make(map[*gorgonia.Node]bool, len(roots))
	for _, n := range roots {
		pinned[n] = true
	}
	b.planAccumulations(order, pinned)
	for _, n := range order {
		if err := b.lower(n); err != nil {
			return err
		}
	}
	return nil
}

// entryPoints records the slots of the inputs, the output, the gradients
// and the WithOutputs nodes, and the instruction list of each entry point.
func (b *builder) entryPoints(out *gorgonia.Node, wrt, grads []*gorgonia.Node, cfg config) {
	c, outputs := b.c, cfg.outputs
	for _, n := range wrt {
		s := b.slot[n]
		c.wrt = append(c.wrt, s)
		c.dim += c.slotLen[s]
	}
	var roots []int
	for _, n := range append(append([]*gorgonia.Node{out}, grads...), outputs...) {
		if n != nil {
			roots = append(roots, b.slot[n])
		}
	}
	if !cfg.noFold {
		b.foldTransposes(roots)
	}
	c.outSlot = -1
	if out != nil {
		c.outSlot = b.slot[out]
		c.value = b.subset(b.ancestors([]*gorgonia.Node{out}))
		c.full = b.subset(b.ancestors(append([]*gorgonia.Node{out}, grads...)))
	}
	for _, gn := range grads {
		c.gradSlots = append(c.gradSlots, b.slot[gn])
	}
	for _, n := range outputs {
		s := b.slot[n]
		c.extra = append(c.extra, s)
		c.extraDim += c.slotLen[s]
	}
	c.outputs = b.subset(b.ancestors(outputs))
}

// finish lays out the arena, folds constants, fuses and packs the lowered
// program (hasOut: it has a scalar output and a gradient) and returns its
// first Program.
func (b *builder) finish(hasOut bool, cfg config) (*Program, error) {
	c := b.c
	c.chkSlot = -1
	if hasOut && !cfg.noFuse {
		c.chkSlot = len(c.slotOff)
		c.slotOff = append(c.slotOff, b.arenaLen)
		c.slotLen = append(c.slotLen, 1)
		b.arenaLen++
	}
	c.ioOff = b.arenaLen
	if !cfg.noPack {
		b.frontLayout()
	}
	c.arenaLen = b.arenaLen
	// c.init holds the initial values: the front region (everything
	// else starts at zero), or, unpacked, the arena without the io region.
	initLen := c.ioOff
	if !cfg.noPack {
		initLen = b.frontEnd
	}
	c.init = make([]float64, initLen)
	for _, d := range b.inits {
		copy(c.init[c.slotOff[d.slot]:], d.v)
	}
	var folded []instr
	for i, f := range b.folded {
		if f {
			folded = append(folded, b.instr[i])
		}
	}
	if len(folded) > 0 {
		// The folding program runs on c.init itself: folded instructions
		// read constants and write slots of the front region.
		if err := newProgram(c, c.init).run(folded); err != nil {
			return nil, fmt.Errorf("ad: evaluating constant subgraph: %w", err)
		}
	}
	valueOut, fullOut := []int{c.outSlot}, append([]int{c.outSlot}, c.gradSlots...)
	if !cfg.noFuse && !cfg.noAccum {
		if cfg.checkRewrites != nil {
			for _, l := range []struct {
				list    []instr
				liveOut []int
			}{{c.value, valueOut}, {c.full, fullOut}, {c.outputs, c.extra}} {
				if err := cfg.checkRewrites(c, l.list, l.liveOut); err != nil {
					return nil, err
				}
			}
		}
		if hasOut {
			c.value = c.mergeSymmetricProducts(c.value, valueOut)
			c.full = c.mergeSymmetricProducts(c.full, fullOut)
			c.value = c.accumulateProducts(c.value, valueOut)
			c.full = c.accumulateProducts(c.full, fullOut)
		}
		c.outputs = c.accumulateProducts(c.outputs, c.extra)
	}
	if hasOut && !cfg.noFuse {
		c.value = c.fuse(c.value, valueOut, b.isConst)
		c.full = c.fuse(c.full, fullOut, b.isConst)
		c.gradChecked = c.markGradChecks()
	}
	if !cfg.noFuse {
		c.outputs = c.fuse(c.outputs, c.extra, b.isConst)
	}
	// Count fallbacks after folding: one evaluated at compile time costs
	// nothing at run time.
	fb := make(map[string]int)
	for i, ins := range b.instr {
		if ins.kind == kFallback && !b.folded[i] {
			fb[ins.label()]++
		}
	}
	for op, n := range fb {
		c.fallbacks = append(c.fallbacks, fmt.Sprintf("%s ×%d", op, n))
	}
	sort.Strings(c.fallbacks)
	if !cfg.noPack {
		b.checkPack = cfg.checkPack
		b.pack()
	}
	if len(c.init) < c.ioOff {
		arena := make([]float64, c.ioOff)
		copy(arena, c.init)
		c.init = arena
	}
	// The io region is allocated on first use (see frontLayout) unless a
	// gradient is not sure to be written by every evaluation (as running
	// in place requires).
	if hasOut {
		// Planned once here; each Program copies the plan.
		c.inplace = (&Program{code: c}).planInplace()
	}
	if c.arenaLen > c.ioOff {
		c.ioEager = c.inplace == nil || !c.inplace.ok
	}
	for _, l := range [][]instr{c.value, c.full, c.outputs} {
		setDispatch(l)
	}
	// The program takes c.init as its arena: only newProgram reads c.init,
	// so it need not be copied.
	return newProgram(c, c.init), nil
}

// checkMember reports an error unless n is a node of g.
func checkMember(g *gorgonia.ExprGraph, n *gorgonia.Node, what string) error {
	if n == nil {
		return fmt.Errorf("ad: %s is nil", what)
	}
	// ExprGraph.Node returns a non-nil interface even for an unknown ID, so
	// compare the node it holds.
	if gn, _ := g.Node(n.ID()).(*gorgonia.Node); n.Graph() != g || gn != n {
		return fmt.Errorf("ad: %s %q is not in the graph", what, n.Name())
	}
	return nil
}

// ancestors returns roots and every node they depend on.
func (b *builder) ancestors(roots []*gorgonia.Node) map[*gorgonia.Node]bool {
	set := make(map[*gorgonia.Node]bool, b.nodes)
	stack := append([]*gorgonia.Node(nil), roots...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if set[n] {
			continue
		}
		set[n] = true
		stack = append(stack, b.children(n)...)
	}
	return set
}

// children is children(b.g, n), asked of the graph once per node: the
// compile walks the graph several times (the nodes needed, those of the
// value, of the gradient, of the outputs, then lowering).
func (b *builder) children(n *gorgonia.Node) []*gorgonia.Node {
	if cs, ok := b.kids[n]; ok {
		return cs
	}
	if b.kids == nil {
		b.kids = make(map[*gorgonia.Node][]*gorgonia.Node)
	}
	cs := children(b.g, n)
	b.kids[n] = cs
	return cs
}

// children returns n's arguments in order.
func children(g *gorgonia.ExprGraph, n *gorgonia.Node) []*gorgonia.Node {
	it := g.From(n.ID())
	var cs []*gorgonia.Node
	for it.Next() {
		cs = append(cs, it.Node().(*gorgonia.Node))
	}
	return cs
}

// size is the number of elements of a shape; a scalar has one.
func size(s tensor.Shape) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// builder carries compile-time state.
type builder struct {
	checkPack func(b *builder, newOff []int) // see config
	g         *gorgonia.ExprGraph
	nodes     int // in the graph: a size hint for maps
	c         *code
	wrt       map[*gorgonia.Node]bool
	slot      map[*gorgonia.Node]int
	owner     []*gorgonia.Node // node that produced each instruction, parallel to code
	instr     []instr
	inits     []initVal

	consts   map[int][]float64 // slots whose value is known while compiling
	isConst  map[int]bool      // slots fixed at compile time, possibly computed by folding
	folded   []bool            // instructions with constant inputs, parallel to instr
	arenaLen int

	accum      map[*gorgonia.Node]*accumPlan       // roots of sums of slice gradients
	absorbed   map[*gorgonia.Node]bool             // interior nodes of those sums: no buffer
	shared     map[*gorgonia.Node]bool             // WithSharedData nodes
	viewOf     map[int]int                         // alias slot -> the slot owning its memory
	transposes map[int]transposeOf                 // 2-D transposes by out slot, see transpose.go
	kids       map[*gorgonia.Node][]*gorgonia.Node // memo of children
	front      []bool                              // slots laid out first, see frontLayout
	io         []bool                              // slots of the io region, see frontLayout
	frontEnd   int                                 // end of their region
}

type initVal struct {
	slot int
	v    []float64
}

// newSlot reserves a fresh buffer of n elements for node nd.
func (b *builder) newSlot(nd *gorgonia.Node, n int) int {
	s := len(b.c.slotOff)
	b.c.slotOff = append(b.c.slotOff, b.arenaLen)
	b.c.slotLen = append(b.c.slotLen, n)
	b.arenaLen += n
	b.slot[nd] = s
	return s
}

// aliasSlot makes nd a view of n elements of slot base starting at off.
func (b *builder) aliasSlot(nd *gorgonia.Node, base, off, n int) {
	s := len(b.c.slotOff)
	b.c.slotOff = append(b.c.slotOff, b.c.slotOff[base]+off)
	b.c.slotLen = append(b.c.slotLen, n)
	b.slot[nd] = s
	if o, ok := b.viewOf[base]; ok {
		base = o
	}
	b.viewOf[s] = base
	b.isConst[s] = b.isConst[base]
	if v, ok := b.c.shared[base]; ok { // a view of the caller's array
		b.c.shared[s] = v[off : off+n]
	}
}

// emit appends an instruction computing node nd.
func (b *builder) emit(nd *gorgonia.Node, ins instr) {
	if ins.name == "" {
		ins.op = nd.Op() // formatted only if an error or Fallbacks names it
	}
	// An instruction whose inputs are all constant (gradient seeds,
	// broadcast constants) is evaluated once at compile time.
	fold := len(ins.args) > 0
	for _, a := range ins.args {
		fold = fold && b.isConst[a]
	}
	if fold {
		b.isConst[ins.out] = true
	}
	b.instr = append(b.instr, ins)
	b.owner = append(b.owner, nd)
	b.folded = append(b.folded, fold)
}

// subset returns, in evaluation order, the instructions of nodes in set
// that were not folded into constants.
func (b *builder) subset(set map[*gorgonia.Node]bool) []instr {
	var out []instr
	for i, nd := range b.owner {
		if set[nd] && !b.folded[i] {
			out = append(out, b.instr[i])
		}
	}
	return out
}

// opType names an op's concrete type without package or pointer, e.g.
// "sumOp"; gorgonia's built-in op types are unexported.
func opType(op gorgonia.Op) string {
	if m, ok := op.(Mover); ok {
		return moverType(m.Moves())
	}
	return gorgoniaType(op)
}

// gorgoniaType is the name of op's type if it is one of gorgonia's, else "".
func gorgoniaType(op gorgonia.Op) string {
	t := reflect.TypeOf(op)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() != "gorgonia.org/gorgonia" {
		return ""
	}
	return t.Name()
}

// opField reads a field of a built-in op by reflection.
func opField(op gorgonia.Op, name string) reflect.Value {
	v := reflect.ValueOf(op)
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	return v.FieldByName(name)
}

// lower assigns node nd a buffer and, unless it is an input, constant or
// view, an instruction.
func (b *builder) lower(nd *gorgonia.Node) error {
	shape := nd.Shape()
	n := size(shape)
	op := nd.Op()

	if op == nil {
		if b.shared[nd] && !b.wrt[nd] {
			return b.lowerShared(nd, n)
		}
		s := b.newSlot(nd, n)
		if b.wrt[nd] {
			return nil
		}
		v, err := nodeValue(nd)
		if err != nil {
			return err
		}
		b.inits = append(b.inits, initVal{s, v})
		b.c.data[nd] = s
		return nil
	}

	if b.absorbed[nd] {
		return nil // computed by the accumulation instruction of its sum
	}
	if plan, ok := b.accum[nd]; ok {
		return b.lowerAccum(nd, plan)
	}

	cs := b.children(nd)
	args := make([]int, len(cs))
	for i, c := range cs {
		s, ok := b.slot[c]
		if !ok {
			return fmt.Errorf("ad: internal error: argument %q of %q not lowered", c.Name(), nd.Name())
		}
		args[i] = s
	}

	if l, ok := op.(Lowerer); ok {
		if nd.Dtype() != tensor.Float64 {
			return fmt.Errorf("ad: node %q (%v) has dtype %v, want float64", nd.Name(), op, nd.Dtype())
		}
		in := make([]tensor.Shape, len(cs))
		for i, c := range cs {
			in[i] = c.Shape()
		}
		k, err := l.Lower(in)
		if err != nil {
			return fmt.Errorf("ad: lowering %v for inputs %v: %w", op, in, err)
		}
		if k == nil {
			return fmt.Errorf("ad: lowering %v returned a nil kernel", op)
		}
		s := b.newSlot(nd, n)
		idx := len(b.c.kernels)
		b.c.kernels = append(b.c.kernels, k)
		sk, ok := k.(Scratcher)
		b.c.scratch = append(b.c.scratch, ok)
		if ok {
			b.c.scratchN = max(b.c.scratchN, sk.ScratchLen())
		}
		b.c.kernArgs = append(b.c.kernArgs, args)
		b.emit(nd, instr{kind: kKernel, out: s, args: args, kernel: idx})
		return nil
	}

	typ := opType(op)
	switch typ {
	case "constantScalar", "constantTensor":
		v, err := nodeValue(nd)
		if err != nil {
			return err
		}
		s := b.newSlot(nd, n)
		b.inits = append(b.inits, initVal{s, v})
		b.consts[s] = v
		b.isConst[s] = true
		return nil
	case "sizeOp":
		// A size is known at compile time: fold it into a constant.
		if len(cs) != 1 {
			break
		}
		v, err := doOp(op, []gorgonia.Value{zeroValue(cs[0])})
		if err != nil {
			return fmt.Errorf("ad: %v: %w", op, err)
		}
		f, err := valueData(v, 1)
		if err != nil {
			return fmt.Errorf("ad: %v: %w", op, err)
		}
		s := b.newSlot(nd, n)
		b.inits = append(b.inits, initVal{s, f})
		b.consts[s] = f
		b.isConst[s] = true
		return nil
	}

	if dt := nd.Dtype(); dt != tensor.Float64 && !(typ == "elemBinOp" && dt == tensor.Bool) {
		return fmt.Errorf("ad: node %q (%v) has dtype %v; only float64 graphs are supported", nd.Name(), op, dt)
	}

	ok, err := b.lowerBuiltin(nd, typ, cs, args)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	return b.lowerFallback(nd, cs, args)
}

// lowerBuiltin lowers gorgonia's own ops. It reports false when it does not
// handle the node, which then runs through the op's Do.
func (b *builder) lowerBuiltin(nd *gorgonia.Node, typ string, cs []*gorgonia.Node, args []int) (bool, error) {
	op := nd.Op()
	n := size(nd.Shape())
	switch typ {
	case "elemUnaryOp":
		name := fmt.Sprint(op)
		f, ok := unaryFuncs[name]
		if !ok || len(cs) != 1 || size(cs[0].Shape()) != n {
			return false, nil
		}
		s := b.newSlot(nd, n)
		b.emit(nd, instr{kind: kUnary, out: s, args: args, unary: f, sym: name, name: name})
		return true, nil

	case "elemBinOp":
		name := fmt.Sprint(op)
		sym, _, _ := strings.Cut(name, " ")
		bop, ok := binaryOps[sym]
		if !ok || len(cs) != 2 {
			return false, nil
		}
		na, nb := size(cs[0].Shape()), size(cs[1].Shape())
		var v uint8
		switch {
		case na == n && nb == n:
			v = 0
		case na == 1 && nb == n:
			v = 1
		case na == n && nb == 1:
			v = 2
		default:
			return false, nil
		}
		s := b.newSlot(nd, n)
		b.emit(nd, instr{kind: kBinary, out: s, args: args, bop: bop, sym: sym, variant: v, name: name})
		return true, nil

	case "sumOp", "maxOp":
		if len(cs) != 1 {
			return false, nil
		}
		along := opField(op, "along")
		if !along.IsValid() || along.Kind() != reflect.Slice {
			return false, nil
		}
		axes := make([]int, along.Len())
		for i := range axes {
			axes[i] = int(along.Index(i).Int())
		}
		in := cs[0].Shape()
		index, outN, ok := reductionIndex(in, axes)
		if !ok || outN != n {
			return false, nil
		}
		s := b.newSlot(nd, n)
		switch {
		case typ == "sumOp" && n == 1:
			b.emit(nd, instr{kind: kSumAll, out: s, args: args})
		case typ == "sumOp":
			b.emit(nd, instr{kind: kSumIndex, out: s, args: args, index: index})
		default:
			b.emit(nd, instr{kind: kMaxIndex, out: s, args: args, index: index})
		}
		return true, nil

	case "linAlgBinOp":
		return b.lowerLinAlg(nd, cs, args)

	case "byIndicesOp", "byIndicesOpDiffOp":
		return b.lowerByIndices(nd, typ, cs, args)

	case "softmaxOp", "softmaxDiffOp":
		return b.lowerSoftmax(nd, typ, cs, args)

	case "reshapeOp", "transposeOp", "sliceOp", "sliceIncrOp", "concatOp", "repeatOp":
		return b.lowerGather(nd, typ, cs, args)
	}
	return false, nil
}

// reductionIndex maps each element of a tensor of shape in to its position
// in the reduction over axes (gorgonia drops the reduced axes).
func reductionIndex(in tensor.Shape, axes []int) ([]int32, int, bool) {
	red := make([]bool, len(in))
	for _, a := range axes {
		if a < 0 || a >= len(in) {
			return nil, 0, false
		}
		red[a] = true
	}
	outN := 1
	for i, d := range in {
		if !red[i] {
			outN *= d
		}
	}
	total := size(in)
	index := make([]int32, total)
	coord := make([]int, len(in))
	for j := 0; j < total; j++ {
		k := 0
		for i, d := range in {
			if !red[i] {
				k = k*d + coord[i]
			}
		}
		index[j] = int32(k)
		for i := len(in) - 1; i >= 0; i-- {
			coord[i]++
			if coord[i] < in[i] {
				break
			}
			coord[i] = 0
		}
	}
	return index, outN, true
}

// lowerLinAlg lowers matrix products to gonum BLAS.
func (b *builder) lowerLinAlg(nd *gorgonia.Node, cs []*gorgonia.Node, args []int) (bool, error) {
	op := nd.Op()
	if len(cs) != 2 {
		return false, nil
	}
	kindV := opField(op, "āBinaryOperator")
	tAV, tBV := opField(op, "transA"), opField(op, "transB")
	if !kindV.IsValid() || !tAV.IsValid() || !tBV.IsValid() {
		return false, nil
	}
	tA, tB := tAV.Bool(), tBV.Bool()
	as, bs := cs[0].Shape(), cs[1].Shape()
	na, nb := size(as), size(bs)
	n := size(nd.Shape())
	trans := func(t bool) blas.Transpose {
		if t {
			return blas.Trans
		}
		return blas.NoTrans
	}
	eff := func(r, c int, t bool) (int, int) {
		if t {
			return c, r
		}
		return r, c
	}
	var l linalg
	var kind instrKind
	switch kindV.Uint() {
	case 0: // matrix × matrix
		if len(as) != 2 || len(bs) != 2 {
			return false, nil
		}
		m, k := eff(as[0], as[1], tA)
		k2, nn := eff(bs[0], bs[1], tB)
		if k != k2 || m*nn != n {
			return false, nil
		}
		l = linalg{tA: trans(tA), tB: trans(tB), ar: as[0], ac: as[1], br: bs[0], bc: bs[1], m: m, n: nn}
		kind = kGemm
	case 1: // matrix × vector
		if len(as) != 2 {
			return false, nil
		}
		m, k := eff(as[0], as[1], tA)
		if k != nb || m != n {
			return false, nil
		}
		l = linalg{tA: trans(tA), ar: as[0], ac: as[1]}
		kind = kGemv
	case 2: // vector · vector
		if na != nb || n != 1 {
			return false, nil
		}
		kind = kDot
	case 3: // outer product
		if na*nb != n {
			return false, nil
		}
		kind = kOuter
	case 4: // batched matrix × matrix
		if len(as) < 3 || len(bs) != len(as) {
			return false, nil
		}
		d := len(as)
		batch := size(as[:d-2])
		if batch != size(bs[:d-2]) {
			return false, nil
		}
		m, k := eff(as[d-2], as[d-1], tA)
		k2, nn := eff(bs[d-2], bs[d-1], tB)
		if k != k2 || batch*m*nn != n {
			return false, nil
		}
		l = linalg{tA: trans(tA), tB: trans(tB), ar: as[d-2], ac: as[d-1], br: bs[d-2], bc: bs[d-1], m: m, n: nn, batch: batch}
		kind = kBatchGemm
	default:
		return false, nil
	}
	if kind == kGemm || kind == kBatchGemm {
		// The product packs panels into the Program's scratch.
		b.c.scratchN = max(b.c.scratchN, gemm.WorkLen(l.inner()))
	}
	var pick []int32
	if kind == kGemv {
		pick = b.selectionPick(cs[0], args[0], l)
	}
	s := b.newSlot(nd, n)
	b.emit(nd, instr{kind: kind, out: s, args: args, la: l, pick: pick})
	return true, nil
}

// selectionPick returns, for a matrix–vector product whose matrix is a
// constant or a data node holding a selection matrix (every row of op(A)
// has at most one non-zero element, and it is 1: what ppl's Diag,
// StrictlyLower and DiagMatrix build, and hand-written scatters into a
// loading matrix), the position in the vector that each output copies, −1
// for a zero row; nil otherwise. The product then runs as that copy: the
// same values for every finite vector, without the m·n multiplications
// (see instr.pick for where bits differ).
func (b *builder) selectionPick(a *gorgonia.Node, slot int, l linalg) []int32 {
	if b.c.shared[slot] != nil || a.Op() != nil && opType(a.Op()) != "constantTensor" {
		return nil
	}
	if b.wrt[a] {
		return nil
	}
	v, err := nodeValue(a)
	if err != nil || len(v) != l.ar*l.ac {
		return nil
	}
	rows, cols := l.ar, l.ac
	at := func(i, j int) float64 { return v[i*l.ac+j] }
	if l.tA == blas.Trans {
		rows, cols = l.ac, l.ar
		at = func(i, j int) float64 { return v[j*l.ac+i] }
	}
	pick := make([]int32, rows)
	for i := range pick {
		pick[i] = -1
		for j := 0; j < cols; j++ {
			switch x := at(i, j); {
			case x == 0:
			case x == 1 && pick[i] < 0:
				pick[i] = int32(j)
			default:
				return nil
			}
		}
	}
	if a.Op() == nil {
		b.c.picked[slot] = true
	}
	return pick
}

// lowerByIndices lowers gorgonia's ByIndices (args x, indices) and its
// gradient op (args x, gradient, indices).
func (b *builder) lowerByIndices(nd *gorgonia.Node, typ string, cs []*gorgonia.Node, args []int) (bool, error) {
	axisV := opField(nd.Op(), "axis")
	if !axisV.IsValid() || !axisV.CanInt() {
		return false, nil
	}
	axis := int(axisV.Int())
	want, kind := 2, kByIndex
	if typ == "byIndicesOpDiffOp" {
		want, kind = 3, kByIndexGrad
	}
	if len(cs) != want {
		return false, nil
	}
	xs := cs[0].Shape()
	if axis < 0 || axis >= len(xs) {
		return false, nil
	}
	sel := selection{outer: size(xs[:axis]), n: xs[axis], inner: size(xs[axis+1:]), m: size(cs[want-1].Shape())}
	n := size(nd.Shape())
	switch kind {
	case kByIndex:
		if n != sel.outer*sel.m*sel.inner {
			return false, nil
		}
	case kByIndexGrad:
		if n != size(xs) || size(cs[1].Shape()) != sel.outer*sel.m*sel.inner {
			return false, nil
		}
	}
	s := b.newSlot(nd, n)
	b.emit(nd, instr{kind: kind, out: s, args: args, sel: sel})
	return true, nil
}

// lowerSoftmax lowers gorgonia's SoftMax and LogSoftMax (arg x) and their
// gradient op (args x, output, gradient), resolving the axis as gorgonia
// does: −1 means the last axis, and a vector's only axis.
func (b *builder) lowerSoftmax(nd *gorgonia.Node, typ string, cs []*gorgonia.Node, args []int) (bool, error) {
	axisV, logV := opField(nd.Op(), "axis"), opField(nd.Op(), "isLog")
	if !axisV.IsValid() || !axisV.CanInt() || !logV.IsValid() || logV.Kind() != reflect.Bool {
		return false, nil
	}
	want, kind := 1, kSoftmax
	if typ == "softmaxDiffOp" {
		want, kind = 3, kSoftmaxGrad
	}
	if len(cs) != want {
		return false, nil
	}
	xs := cs[0].Shape()
	n := size(xs)
	if len(xs) == 0 || size(nd.Shape()) != n {
		return false, nil
	}
	for _, c := range cs[1:] {
		if size(c.Shape()) != n {
			return false, nil
		}
	}
	axis := int(axisV.Int())
	if axis == -1 {
		axis = len(xs) - 1
	}
	if axis < 0 || axis >= len(xs) {
		return false, nil
	}
	sel := selection{outer: size(xs[:axis]), n: xs[axis], inner: size(xs[axis+1:])}
	s := b.newSlot(nd, n)
	b.emit(nd, instr{kind: kind, out: s, args: args, sel: sel, isLog: logV.Bool()})
	return true, nil
}
