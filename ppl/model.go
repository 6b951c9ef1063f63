package ppl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/gorgonia"
)

// Model is a log-density on the unconstrained space R^Dim with a map back
// to the constrained parameters, the contract between model code and the
// samplers.
type Model interface {
	// Dim is the unconstrained dimension.
	Dim() int
	// LogDensity returns the log-density at the unconstrained point u,
	// log-Jacobians of the constraining transforms included.
	LogDensity(u []float64) (float64, error)
	// LogDensityGrad also writes the gradient into grad (length Dim).
	LogDensityGrad(u, grad []float64) (float64, error)
	// ParamNames returns the constrained, flattened Stan-style names
	// (theta.1, B.1.2) of the parameters and then of reported quantities.
	ParamNames() []string
	// Constrain writes the constrained values named by ParamNames at u
	// into dst, len(dst) == len(ParamNames()).
	Constrain(u, dst []float64) error
	// Init writes an initial unconstrained point into u.
	Init(rng *rand.Rand, u []float64) error
	// Clone returns an independent copy for use by another goroutine.
	Clone() Model
}

// ErrConstraint is returned (wrapped) when a constrained value given by the
// user, e.g. an initial point, violates its parameter's constraint.
var ErrConstraint = errors.New("ppl: constraint violated")

// GraphModel is the Model built by a Builder: a compiled gorgonia graph
// plus the layout of its parameters. Its methods are not safe for
// concurrent use; Clone gives each goroutine its own.
type GraphModel struct {
	ev      evaluator
	shared  *modelLayout
	outBuf  []float64 // Outputs scratch: params, reports, bounds
	initU   []float64 // fixed initial point, or nil for Stan's uniform(−2, 2)
	uBuf    []float64
	scratch []float64
	// offset is added to every log-density: a selection space's per-model
	// constant (WithModelOffset).
	offset float64
}

// modelLayout is the immutable part of a GraphModel, shared by clones.
type modelLayout struct {
	params   []*param
	names    []string
	nParam   int   // constrained scalars of the declared parameters
	nReport  int   // scalars of reported quantities
	nOut     int   // total Outputs length: params + reports + bounds
	uOff     []int // offset of each parameter in u
	cOff     []int // offset of each parameter in the constrained vector
	boundOff []int // offsets of bound outputs in outBuf
	boundLen []int
	dim      int
	index    map[string]int // parameter name → index in params
	temper   *temperSource  // what Tempered compiles from
	view     *maskedView    // set for a model of a masked selection space
}

// sumTerms returns offset plus the sum of the scalar terms as one node of
// g. Every wrt input must reach the output for gorgonia.Grad, so an input
// that appears in no term (a flat prior, an unused parameter, a part of a
// tempered model) gets an explicit zero term.
func sumTerms(g *gorgonia.ExprGraph, terms, wrt []*gorgonia.Node, offset float64) (*gorgonia.Node, error) {
	e := &expr{}
	terms = append([]*gorgonia.Node(nil), terms...)
	reach := reachable(g, terms)
	for _, w := range wrt {
		if !reach[w.ID()] {
			terms = append(terms, e.mul(e.c(0), e.sum(w)))
		}
	}
	out := terms[0]
	for _, t := range terms[1:] {
		out = e.add(out, t)
	}
	if offset != 0 {
		out = e.add(out, e.c(offset))
	}
	return out, e.err
}

// Model compiles the graph: the log-density is the sum of all added terms
// plus every transform's log-Jacobian. It returns the first error recorded
// while building.
func (b *Builder) Model() (*GraphModel, error) { return b.model(compile) }

type compileFunc func(g *gorgonia.ExprGraph, out *gorgonia.Node, wrt, outputs []*gorgonia.Node) (evaluator, error)

func (b *Builder) model(compile compileFunc) (*GraphModel, error) {
	if b.err != nil {
		return nil, b.err
	}
	if len(b.params) == 0 {
		return nil, located(errors.New("ppl: the model has no parameters"))
	}
	var wrt, outputs []*gorgonia.Node
	lay := &modelLayout{index: map[string]int{}}
	terms := append([]*gorgonia.Node(nil), b.terms...)
	for i, p := range b.params {
		lay.index[p.name] = i
		lay.uOff = append(lay.uOff, lay.dim)
		lay.cOff = append(lay.cOff, lay.nParam)
		wrt = append(wrt, p.wrt...)
		lay.dim += p.usize
		lay.nParam += p.size()
		outputs = append(outputs, p.value)
		lay.names = flatNames(lay.names, p.name, p.shape)
		if p.logJ != nil {
			terms = append(terms, p.logJ)
		}
	}
	for _, r := range b.reports {
		outputs = append(outputs, r.node)
		lay.names = flatNames(lay.names, r.name, r.shape)
		lay.nReport += nodeSize(r.node)
	}
	lay.nOut = lay.nParam + lay.nReport
	for _, p := range b.params {
		for _, bd := range []struct {
			o   operand
			idx *int
		}{{p.lo, &p.loOut}, {p.hi, &p.hiOut}} {
			if bd.o.node == nil {
				continue
			}
			*bd.idx = len(lay.boundOff)
			lay.boundOff = append(lay.boundOff, lay.nOut)
			lay.boundLen = append(lay.boundLen, nodeSize(bd.o.node))
			lay.nOut += nodeSize(bd.o.node)
			outputs = append(outputs, bd.o.node)
		}
	}
	lay.params = b.params
	out, err := sumTerms(b.g, terms, wrt, b.offset)
	if err != nil {
		return nil, err
	}
	lay.temper = &temperSource{mu: b.graphMu, g: b.g, wrt: wrt, offset: b.offset,
		terms:   append([]*gorgonia.Node(nil), b.terms...),
		origins: append([]termOrigin(nil), b.origins...)}
	if err := resetDerivatives(b.g); err != nil {
		return nil, err
	}
	ev, err := compile(b.g, out, wrt, outputs)
	if err != nil {
		return nil, err
	}
	if ev.Dim() != lay.dim {
		return nil, fmt.Errorf("ppl: internal: compiled dimension %d, want %d", ev.Dim(), lay.dim)
	}
	return newGraphModel(ev, lay), nil
}

func newGraphModel(ev evaluator, lay *modelLayout) *GraphModel {
	return &GraphModel{
		ev:      ev,
		shared:  lay,
		outBuf:  make([]float64, lay.nOut),
		uBuf:    make([]float64, lay.dim),
		scratch: make([]float64, lay.dim),
	}
}

// reachable marks the nodes reachable from roots through operands.
func reachable(g *gorgonia.ExprGraph, roots []*gorgonia.Node) map[int64]bool {
	seen := map[int64]bool{}
	stack := append([]*gorgonia.Node(nil), roots...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n.ID()] {
			continue
		}
		seen[n.ID()] = true
		it := g.From(n.ID())
		for it.Next() {
			if c, ok := it.Node().(*gorgonia.Node); ok {
				stack = append(stack, c)
			}
		}
	}
	return seen
}

// Dim is the unconstrained dimension.
func (m *GraphModel) Dim() int { return m.shared.dim }

// LogDensity returns the log-density at u, log-Jacobians included.
func (m *GraphModel) LogDensity(u []float64) (float64, error) {
	if len(u) != m.shared.dim {
		return math.Inf(-1), fmt.Errorf("ppl: point has length %d, want %d", len(u), m.shared.dim)
	}
	lp, err := m.ev.LogDensity(u)
	return lp + m.offset, err
}

// LogDensityGrad returns the log-density at u and writes its gradient into
// grad.
func (m *GraphModel) LogDensityGrad(u, grad []float64) (float64, error) {
	if len(u) != m.shared.dim || len(grad) != m.shared.dim {
		return math.Inf(-1), fmt.Errorf("ppl: point and gradient have lengths %d and %d, want %d", len(u), len(grad), m.shared.dim)
	}
	lp, err := m.ev.LogDensityGrad(u, grad)
	return lp + m.offset, err
}

// ParamNames returns the flattened names of the parameters, then of the
// reported quantities. The caller must not modify the slice.
func (m *GraphModel) ParamNames() []string { return m.shared.names }

// NumConstrained is the number of constrained scalars of the declared
// parameters: ParamNames()[:NumConstrained()] name the values Unconstrain
// takes.
func (m *GraphModel) NumConstrained() int { return m.shared.nParam }

// Constrain writes the parameters' constrained values at u, then the
// reported quantities, into dst.
func (m *GraphModel) Constrain(u, dst []float64) error {
	if len(u) != m.shared.dim {
		return fmt.Errorf("ppl: point has length %d, want %d", len(u), m.shared.dim)
	}
	if len(dst) != len(m.shared.names) {
		return fmt.Errorf("ppl: Constrain: dst has length %d, want %d", len(dst), len(m.shared.names))
	}
	if err := m.ev.Outputs(u, m.outBuf); err != nil {
		return err
	}
	copy(dst, m.outBuf)
	return nil
}

// Unconstrain maps constrained parameter values x (laid out as
// ParamNames()[:NumConstrained()]) to the unconstrained point u. It returns
// an error wrapping ErrConstraint when x violates a constraint.
func (m *GraphModel) Unconstrain(x, u []float64) error {
	lay := m.shared
	if len(x) != lay.nParam {
		return fmt.Errorf("ppl: Unconstrain: %d values, want %d", len(x), lay.nParam)
	}
	if len(u) != lay.dim {
		return fmt.Errorf("ppl: Unconstrain: u has length %d, want %d", len(u), lay.dim)
	}
	if lay.view != nil {
		return lay.view.unconstrain(x, u)
	}
	// Node-valued bounds depend only on parameters declared earlier, so
	// unconstraining in declaration order lets each bound be evaluated at a
	// point whose earlier coordinates are already final.
	w := m.scratch
	clear(w)
	for i, p := range lay.params {
		lo, hi := p.lo.val, p.hi.val
		if p.loOut >= 0 || p.hiOut >= 0 {
			if err := m.ev.Outputs(w, m.outBuf); err != nil {
				return fmt.Errorf("ppl: Unconstrain: evaluating the bounds of %q: %w", p.name, err)
			}
			if p.loOut >= 0 {
				lo = m.outBuf[lay.boundOff[p.loOut] : lay.boundOff[p.loOut]+lay.boundLen[p.loOut]]
			}
			if p.hiOut >= 0 {
				hi = m.outBuf[lay.boundOff[p.hiOut] : lay.boundOff[p.hiOut]+lay.boundLen[p.hiOut]]
			}
		}
		xs := x[lay.cOff[i] : lay.cOff[i]+p.size()]
		if err := p.unconstrain(xs, lo, hi, w[lay.uOff[i]:lay.uOff[i]+p.usize]); err != nil {
			return fmt.Errorf("%w: %w", ErrConstraint, err)
		}
	}
	copy(u, w)
	return nil
}

// UnconstrainNamed is Unconstrain with values given by parameter name
// (each row-major, of the parameter's size). Every parameter must be given.
func (m *GraphModel) UnconstrainNamed(values map[string][]float64, u []float64) error {
	lay := m.shared
	if lay.view != nil {
		return fmt.Errorf("%w: UnconstrainNamed (use Unconstrain)", errMaskedView)
	}
	x := make([]float64, lay.nParam)
	for name, v := range values {
		i, ok := lay.index[name]
		if !ok {
			return fmt.Errorf("ppl: unknown parameter %q", name)
		}
		p := lay.params[i]
		if len(v) != p.size() {
			return fmt.Errorf("ppl: parameter %q: %d values, want %d (shape %v)", name, len(v), p.size(), p.shape)
		}
		copy(x[lay.cOff[i]:], v)
	}
	for _, p := range lay.params {
		if _, ok := values[p.name]; !ok {
			return fmt.Errorf("ppl: no value for parameter %q", p.name)
		}
	}
	return m.Unconstrain(x, u)
}

// WithInit returns a clone whose Init always returns the unconstrained
// image of the given constrained values (by parameter name). It fails when
// a value violates its constraint or a name is unknown or missing.
func (m *GraphModel) WithInit(values map[string][]float64) (*GraphModel, error) {
	u := make([]float64, m.shared.dim)
	if err := m.UnconstrainNamed(values, u); err != nil {
		return nil, err
	}
	c := m.clone()
	c.initU = u
	return c, nil
}

// Init writes an initial point into u: the point given to WithInit, or
// else Stan's default, each coordinate uniform on (−2, 2).
func (m *GraphModel) Init(rng *rand.Rand, u []float64) error {
	if len(u) != m.shared.dim {
		return fmt.Errorf("ppl: Init: u has length %d, want %d", len(u), m.shared.dim)
	}
	if m.initU != nil {
		copy(u, m.initU)
		return nil
	}
	if rng == nil {
		return errors.New("ppl: Init: nil random source")
	}
	for i := range u {
		u[i] = 4*rng.Float64() - 2
	}
	return nil
}

func (m *GraphModel) clone() *GraphModel {
	c := newGraphModel(m.ev.clone(), m.shared)
	c.initU = m.initU // never modified after WithInit
	c.offset = m.offset
	return c
}

// Fallbacks lists the ops that the compiled program runs through gorgonia's
// slow, allocating path (see ad.Program.Fallbacks); empty is the norm.
func (m *GraphModel) Fallbacks() []string {
	if p, ok := m.ev.(program); ok {
		return p.Fallbacks()
	}
	return nil
}

// Clone returns an independent copy sharing the compiled code.
func (m *GraphModel) Clone() Model { return m.clone() }
