package selection

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// selShared is what the chains of one Run share: the prepared proposal
// family and the models built so far with their transports, in a bounded
// least-recently-used cache. Every entry is a fixed function of its model
// (the build function is deterministic, and the Laplace fit starts from a
// point that depends only on the model), so which chain builds a model, and
// when, changes no number: the chains' draws do not depend on scheduling or
// GOMAXPROCS.
type selShared struct {
	sp      *ppl.SelectionSpace
	prop    Proposer
	base    []float64 // the empty model's mode: always-in then shared coordinates
	mu      sync.Mutex
	order   *list.List // of *sharedEntry, most recent first
	items   map[string]*list.Element
	flagged atomic.Int64
	// bound and chainBound are the shared cache's and each chain's bounds
	// on the models they keep (cacheBounds).
	bound, chainBound int
	// fingerprint is the run's, written in its chain files.
	fingerprint string
}

// sharedEntry is one model: a prototype, never evaluated after its fit
// (each chain evaluates its own clone), its Laplace fit (nil when the
// family needs none) and its transports, which are safe for concurrent
// use.
type sharedEntry struct {
	key    string
	terms  ppl.Terms
	proto  *ppl.GraphModel
	lap    *flows.Laplace
	jump   kernels.Transport
	within kernels.Transport
	// logZ is the model's exact log evidence when the space has them
	// (ppl.WithModelEvidence), else NaN.
	logZ float64
	done chan struct{}
	err  error
}

func newSelShared(ctx context.Context, sp *ppl.SelectionSpace, s *Settings) (*selShared, error) {
	t := &selShared{sp: sp, order: list.New(), items: map[string]*list.Element{}}
	t.bound, t.chainBound = cacheBounds(sp.CacheBound(), sp.P(), s.Chains)
	empty, _ := ppl.NewTerms(sp.P())
	m, err := sp.Build(empty)
	if err != nil {
		return nil, err
	}
	lap, err := flows.FitLaplace(m.LogDensityGrad, make([]float64, m.Dim()), nil)
	if err != nil {
		return nil, fmt.Errorf("selection: the model without terms: %w", err)
	}
	t.base = append([]float64(nil), lap.Mean()...)
	in := &Preparation{Space: sp, Base: t.base, Settings: s, laplace: t.laplace}
	if t.prop, err = s.Proposal.Prepare(ctx, in); err != nil {
		return nil, fmt.Errorf("selection: preparing the %v proposals: %w", s.Proposal, err)
	}
	if t.prop == nil {
		return nil, fmt.Errorf("selection: the %v proposals prepared nothing", s.Proposal)
	}
	if s.Informed && !t.prop.Laplace() && !sp.HasEvidence() {
		return nil, fmt.Errorf("selection: Informed weighs neighbours by their evidences: the space has no exact ones (ppl.WithModelEvidence) and the %v proposals fit no Laplace approximation (use Laplace)", s.Proposal)
	}
	return t, nil
}

// get returns model tm's entry, building it (once, whichever chain asks
// first) when it is not cached.
func (t *selShared) get(tm ppl.Terms) (*sharedEntry, error) {
	key := tm.Key()
	t.mu.Lock()
	if el, ok := t.items[key]; ok {
		t.order.MoveToFront(el)
		e := el.Value.(*sharedEntry)
		t.mu.Unlock()
		<-e.done
		return e, e.err
	}
	e := &sharedEntry{key: key, terms: tm, done: make(chan struct{}), logZ: math.NaN()}
	t.items[key] = t.order.PushFront(e)
	for t.order.Len() > t.bound {
		last := t.order.Back()
		t.order.Remove(last)
		delete(t.items, last.Value.(*sharedEntry).key)
	}
	t.mu.Unlock()
	e.err = t.build(e)
	close(e.done)
	if e.err != nil {
		t.mu.Lock()
		if el, ok := t.items[key]; ok && el.Value == e {
			t.order.Remove(el)
			delete(t.items, key)
		}
		t.mu.Unlock()
	}
	return e, e.err
}

// cacheBudget is the memory the run's model caches aim at: the entries
// are fixed functions of their models, so a smaller cache changes which
// models are built again, never a number, and a bounded one keeps a run
// over hundreds of terms (where every chain proposes tens of thousands of
// models) within a laptop's memory.
const cacheBudget = 48 << 20

// cacheEntryBytes estimates one cached model over p terms: its masked
// view (a mask of p values, index and output lists, names), its transport
// (a Cholesky factor) and each chain's clone, measured at about 7.5 kB at
// p = 150 (heap profile of a default run); counted generously.
func cacheEntryBytes(p int) int { return 2048 + 64*p }

// cacheBounds returns the shared cache's bound (the space's CacheBound,
// lowered to cacheBudget's worth of models but never below 256) and each
// chain's (a quarter of it, but at least 256: a chain's own entries keep
// their shared models alive after the shared cache evicts them).
func cacheBounds(spaceBound, p, chains int) (shared, chain int) {
	shared = min(spaceBound, max(256, cacheBudget/cacheEntryBytes(p)))
	chain = min(shared, max(256, shared/max(1, chains)))
	return shared, chain
}

// laplace builds model tm and fits its Laplace approximation, warm-started
// at the empty model's mode (always-in and shared coordinates; 0 for the
// terms).
func (t *selShared) laplace(tm ppl.Terms) (*ppl.GraphModel, *flows.Laplace, error) {
	m, err := t.sp.Build(tm)
	if err != nil {
		return nil, nil, err
	}
	A, S, d := t.sp.Always(), t.sp.Shared(), m.Dim()
	x0 := make([]float64, d)
	copy(x0[:A], t.base[:A])
	copy(x0[d-S:], t.base[A:])
	lap, err := flows.FitLaplace(m.LogDensityGrad, x0, nil)
	if err != nil {
		// The empty model's mode is not a valid start here; try the
		// origin before giving up.
		clear(x0)
		if lap, err = flows.FitLaplace(m.LogDensityGrad, x0, nil); err != nil {
			return nil, nil, fmt.Errorf("selection: model %v: %w", tm, err)
		}
	}
	if !lap.Converged || lap.Regularised {
		t.flagged.Add(1)
	}
	return m, lap, nil
}

func (t *selShared) build(e *sharedEntry) error {
	var err error
	if t.sp.HasEvidence() {
		if e.logZ, err = t.sp.LogEvidence(e.terms); err != nil {
			return fmt.Errorf("selection: model %v: %w", e.terms, err)
		}
	}
	if t.prop.Laplace() {
		e.proto, e.lap, err = t.laplace(e.terms)
	} else {
		e.proto, err = t.sp.Build(e.terms)
	}
	if err != nil {
		return err
	}
	e.jump, e.within, err = t.prop.Model(e.terms, e.proto, e.lap)
	if err != nil {
		return fmt.Errorf("selection: model %v: %w", e.terms, err)
	}
	return nil
}

// selEntry is one chain's handle on a model: the shared entry and the
// chain's own clone of the model, made when first evaluated.
type selEntry struct {
	*sharedEntry
	model *ppl.GraphModel
}

func (e *selEntry) Dim() int { return e.proto.Dim() }
func (e *selEntry) LogDensity(theta []float64) (float64, error) {
	if e.model == nil {
		e.model = e.proto.Clone().(*ppl.GraphModel)
	}
	return e.model.LogDensity(theta)
}
func (e *selEntry) Transport() kernels.Transport { return e.jump }
func (e *selEntry) Proposal() kernels.Transport  { return e.within }

// LogEvidence is the model's exact log evidence when the space has them,
// else its Laplace log evidence, NaN without a fit.
func (e *selEntry) LogEvidence() float64 {
	if !math.IsNaN(e.logZ) || e.lap == nil {
		return e.logZ
	}
	return e.lap.LogEvidence
}

// selTarget is one chain's view of the shared models for the kernel, with
// its own bounded cache of model clones.
type selTarget struct {
	*selShared
	order *list.List
	items map[string]*list.Element
	// terms and key are scratch for the look-ups of every step, which then
	// allocate nothing when the model is cached.
	terms ppl.Terms
	key   []byte
}

func newSelTarget(sh *selShared) *selTarget {
	terms, _ := ppl.NewTerms(sh.sp.P()) // P ≥ 1: the space was checked
	return &selTarget{selShared: sh, order: list.New(), items: map[string]*list.Element{}, terms: terms}
}

func (t *selTarget) NumTerms() int { return t.sp.P() }
func (t *selTarget) Always() int   { return t.sp.Always() }

func (t *selTarget) LogModelPrior(active []int) (float64, error) {
	if err := t.terms.SetIndices(active...); err != nil {
		return math.Inf(-1), err
	}
	return logModelPrior(t.sp, t.terms)
}

// Model returns model active from the chain's cache or the shared one.
func (t *selTarget) Model(active []int) (kernels.SelectionModel, error) {
	if err := t.terms.SetIndices(active...); err != nil {
		return nil, err
	}
	t.key = t.terms.AppendKey(t.key[:0])
	if el, ok := t.items[string(t.key)]; ok {
		t.order.MoveToFront(el)
		return el.Value.(*selEntry), nil
	}
	tm, _ := ppl.NewTerms(t.sp.P(), active...) // a copy the cache may keep
	key := string(t.key)
	se, err := t.get(tm)
	if err != nil {
		return nil, err
	}
	e := &selEntry{sharedEntry: se}
	t.items[key] = t.order.PushFront(e)
	for t.order.Len() > t.chainBound {
		last := t.order.Back()
		t.order.Remove(last)
		delete(t.items, last.Value.(*selEntry).key)
	}
	return e, nil
}

// evidenceTarget is a chain's target of a space with exact evidences: the
// kernel's informed choice reads neighbours' evidences from it without
// building them (kernels.SelectionEvidence). It keeps the evidences it
// computed in a bounded map, since a chain meets the same neighbours again
// and again.
type evidenceTarget struct {
	*selTarget
	logZ map[string]float64
	// memo keeps the neighbour evidences of the last two models weighed
	// (the chain's model and the one proposed), which the informed choice
	// asks for again at the next step.
	memo [2]struct {
		key  string
		self float64
		le   []float64
	}
	next int
}

func (t *evidenceTarget) NeighbourLogEvidences(active []int, le []float64) (float64, error) {
	if err := t.terms.SetIndices(active...); err != nil {
		return math.NaN(), err
	}
	t.key = t.terms.AppendKey(t.key[:0])
	for i := range t.memo {
		if m := &t.memo[i]; m.le != nil && m.key == string(t.key) {
			copy(le, m.le)
			return m.self, nil
		}
	}
	self, err := t.sp.NeighbourLogEvidences(t.terms, le)
	if err != nil {
		return self, fmt.Errorf("selection: neighbours of model %v: %w", t.terms, err)
	}
	m := &t.memo[t.next]
	t.next = 1 - t.next
	m.key, m.self, m.le = string(t.key), self, append(m.le[:0], le...)
	return self, nil
}

// maxEvidenceCache bounds a chain's map of evidences (about 100 bytes an
// entry); the map is emptied when full.
const maxEvidenceCache = 1 << 17

func (t *evidenceTarget) ModelLogEvidence(active []int) (float64, error) {
	if err := t.terms.SetIndices(active...); err != nil {
		return math.NaN(), err
	}
	t.key = t.terms.AppendKey(t.key[:0])
	if v, ok := t.logZ[string(t.key)]; ok {
		return v, nil
	}
	v, err := t.sp.LogEvidence(t.terms)
	if err != nil {
		return v, fmt.Errorf("selection: model %v: %w", t.terms, err)
	}
	if len(t.logZ) >= maxEvidenceCache {
		clear(t.logZ)
	}
	t.logZ[string(t.key)] = v
	return v, nil
}
