package ppl

import (
	"errors"
	"fmt"
	"sync"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MaskedBuildFunc declares the saturated model of a selection, the model
// with all P terms, on a fresh Builder: first the always-in parameters,
// then one coordinate per term (P of them, in term order), then the shared
// parameters (WithSelectionShared), and the log-density, in which mask, a
// vector of P inputs holding 0 or 1, switches the terms off. The model
// with terms γ is the saturated model at mask = γ with the coordinates of
// the inactive terms at 0, so the build function must make them drop out
// exactly: multiply each term's coefficient by its mask entry wherever it
// enters the likelihood, and each term's prior log-density (every
// log-density term of that coordinate) by its mask entry. The term
// coordinates must belong to parameters with elementwise transforms (Real,
// Positive, Lower, Upper, Interval).
//
// mask is an input of the graph, not a parameter: it has no transform and
// no prior, and no model's dimension counts it.
type MaskedBuildFunc func(b *Builder, mask *gorgonia.Node) error

// DefaultMaskedModelCache is the default bound on the models a masked
// selection space (each clone) keeps. A masked model costs no compiled
// program, only index slices, so the bound can be far larger than
// DefaultModelCache and spare refitting what a sampler keeps proposing.
const DefaultMaskedModelCache = 1 << 15

// maskName names the mask's input. Users cannot declare it: their names
// cannot contain '.'.
const maskName = "ppl.mask"

// NewMaskedSelectionSpace returns the space of the 2^p models of the
// saturated model built by build (see MaskedBuildFunc). The saturated
// model is built and compiled once; each model is then a view of it that
// scatters the model's coordinates into the saturated vector (the inactive
// terms' at 0), sets the mask, and gathers the gradient, so a model costs
// no compilation and a few index slices of memory. It suits models that
// share one structure, such as a regression's; NewSelectionSpace builds
// each model on its own for those that do not.
//
// The views are GraphModels whose evaluations share a pool of clones of
// the saturated program (one per goroutine evaluating at once), so they are
// safe to clone and use from several goroutines like any GraphModel. A
// view's ParamNames are the saturated model's names of its coordinates
// (beta.1, beta.3, beta.6 for terms {1, 4} of a 1+P vector beta), and its
// Constrain gives their values and then every reported quantity of the
// saturated model. Views have no tempered form and no UnconstrainNamed.
func NewMaskedSelectionSpace(p int, build MaskedBuildFunc, opts ...SelectionOption) (*SelectionSpace, error) {
	s, err := newSelectionSpace(p, build == nil, DefaultMaskedModelCache, opts)
	if err != nil {
		return nil, err
	}
	sat, err := newMaskedSaturated(p, s.shared, build)
	if err != nil {
		return nil, err
	}
	s.masked = sat
	s.always = sat.always
	s.ready = true
	s.cache = newLRU(s.bound)
	return s, nil
}

// maskedSaturated is the compiled saturated model of a masked selection
// space and a pool of its clones, shared by every view and clone of the
// space.
type maskedSaturated struct {
	p, always, shared int
	proto             *GraphModel // never evaluated: only cloned
	lay               *modelLayout
	elementwise       []bool // per saturated parameter: transform acts elementwise
	mu                sync.Mutex
	free              []*maskedWork
}

// maskedWork is one clone of the saturated model with its buffers, used by
// one evaluation at a time.
type maskedWork struct {
	m    *GraphModel
	u, g []float64 // saturated point and gradient
	out  []float64 // saturated outputs
}

func newMaskedSaturated(p, shared int, build MaskedBuildFunc) (sat *maskedSaturated, err error) {
	defer func() {
		if r := recover(); r != nil {
			sat, err = nil, fmt.Errorf("ppl: the build function panicked for the saturated model: %v", r)
		}
	}()
	b := NewBuilder()
	mp := &param{name: maskName, kind: realLine, shape: tensor.Shape{p}, loOut: -1, hiOut: -1}
	if err := mp.build(b.g); err != nil {
		return nil, err
	}
	b.names[maskName] = "selection mask"
	b.params = append(b.params, mp)
	if err := build(b, mp.value); err != nil {
		return nil, fmt.Errorf("ppl: building the saturated model: %w", err)
	}
	m, err := b.Model()
	if err != nil {
		return nil, fmt.Errorf("ppl: building the saturated model: %w", err)
	}
	lay := m.shared
	always := lay.dim - 2*p - shared
	if always < 0 {
		return nil, fmt.Errorf("ppl: the saturated model has dimension %d, fewer than its %d terms and %d shared parameters: the build function must declare one coordinate per term", lay.dim-p, p, shared)
	}
	sat = &maskedSaturated{p: p, always: always, shared: shared, proto: m, lay: lay, elementwise: make([]bool, len(lay.params))}
	lo, hi := p+always, 2*p+always // the term coordinates
	for i, q := range lay.params {
		switch q.kind {
		case realLine, lowerBounded, upperBounded, interval:
			sat.elementwise[i] = q.usize == q.size()
		}
		if i > 0 && lay.uOff[i] < hi && lay.uOff[i]+q.usize > lo && !sat.elementwise[i] {
			return nil, fmt.Errorf("ppl: the saturated model's term coordinates fall in parameter %q, whose %v transform is not elementwise", q.name, q.kind)
		}
	}
	return sat, nil
}

func (s *maskedSaturated) get() *maskedWork {
	s.mu.Lock()
	if n := len(s.free); n > 0 {
		w := s.free[n-1]
		s.free = s.free[:n-1]
		s.mu.Unlock()
		return w
	}
	s.mu.Unlock()
	lay := s.lay
	return &maskedWork{m: s.proto.clone(), u: make([]float64, lay.dim), g: make([]float64, lay.dim), out: make([]float64, lay.nOut)}
}

func (s *maskedSaturated) put(w *maskedWork) {
	s.mu.Lock()
	s.free = append(s.free, w)
	s.mu.Unlock()
}

// view returns model t as a view of the saturated model.
func (s *maskedSaturated) view(t Terms) *GraphModel {
	p, A, S, lay := s.p, s.always, s.shared, s.lay
	v := &maskedView{sat: s, mask: make([]float64, p)}
	for i := range A {
		v.idx = append(v.idx, p+i)
	}
	for _, j := range t.Indices() {
		v.mask[j] = 1
		v.idx = append(v.idx, p+A+j)
	}
	for i := range S {
		v.idx = append(v.idx, p+A+p+i)
	}
	active := func(u int) bool { return u < p+A || u >= 2*p+A || v.mask[u-p-A] == 1 }
	vl := &modelLayout{dim: len(v.idx), index: map[string]int{}, view: v}
	for i, q := range lay.params[1:] {
		i++
		for e := range q.size() {
			if s.elementwise[i] && !active(lay.uOff[i]+e) {
				continue
			}
			v.out = append(v.out, lay.cOff[i]+e)
		}
	}
	vl.nParam = len(v.out)
	for r := range lay.nReport {
		v.out = append(v.out, lay.nParam+r)
	}
	vl.nReport = lay.nReport
	vl.nOut = len(v.out)
	vl.names = make([]string, len(v.out))
	for i, o := range v.out {
		vl.names[i] = lay.names[o]
	}
	return newGraphModel(v, vl)
}

// maskedView is the evaluator of one model of a masked selection space.
// It is immutable, so its clones are itself.
type maskedView struct {
	sat  *maskedSaturated
	idx  []int     // the model's coordinates in the saturated vector
	mask []float64 // the mask, 0 or 1 per term
	out  []int     // the model's outputs among the saturated outputs
}

func (v *maskedView) Dim() int { return len(v.idx) }

// load writes the saturated point of x into w.u.
func (v *maskedView) load(w *maskedWork, x []float64) {
	clear(w.u)
	copy(w.u, v.mask)
	for i, j := range v.idx {
		w.u[j] = x[i]
	}
}

func (v *maskedView) LogDensity(x []float64) (float64, error) {
	w := v.sat.get()
	defer v.sat.put(w)
	v.load(w, x)
	return w.m.ev.LogDensity(w.u)
}

func (v *maskedView) LogDensityGrad(x, grad []float64) (float64, error) {
	w := v.sat.get()
	defer v.sat.put(w)
	v.load(w, x)
	lp, err := w.m.ev.LogDensityGrad(w.u, w.g)
	for i, j := range v.idx {
		grad[i] = w.g[j]
	}
	return lp, err
}

func (v *maskedView) Outputs(x, dst []float64) error {
	w := v.sat.get()
	defer v.sat.put(w)
	v.load(w, x)
	if err := w.m.ev.Outputs(w.u, w.out); err != nil {
		return err
	}
	for i, o := range v.out {
		dst[i] = w.out[o]
	}
	return nil
}

func (v *maskedView) clone() evaluator { return v }

// unconstrain maps the model's constrained values x to its unconstrained
// point u through the saturated model: the inactive terms' values are
// those at their coordinate 0.
func (v *maskedView) unconstrain(x, u []float64) error {
	w := v.sat.get()
	defer v.sat.put(w)
	clear(u)
	v.load(w, u)
	if err := w.m.ev.Outputs(w.u, w.out); err != nil {
		return err
	}
	for i := range x {
		w.out[v.out[i]] = x[i]
	}
	if err := w.m.Unconstrain(w.out[:v.sat.lay.nParam], w.g); err != nil {
		return err
	}
	for i, j := range v.idx {
		u[i] = w.g[j]
	}
	return nil
}

// errMaskedView is returned by the methods a masked selection model lacks.
var errMaskedView = errors.New("ppl: not available for a model of a masked selection space")
