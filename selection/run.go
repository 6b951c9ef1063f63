package selection

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/draws"
)

// Defaults of Settings.
const (
	DefaultChains = 4
	DefaultWarmup = 1000
	DefaultSteps  = 40000
	DefaultTop    = 20
)

// Settings configures Select. The zero value (or nil) gives the
// defaults.
type Settings struct {
	// Seed seeds every random stream (one per chain).
	Seed uint64
	// Chains is the number of chains (default 4), Warmup the steps each
	// discards first (default 1000) and Steps the kept steps of each
	// (default 40000).
	Chains, Warmup, Steps int
	// Shard, when non-nil, runs only the chains listed (indices in
	// [0, Chains)), for a run split over processes.
	Shard []int
	// Proposal is the family of the jumps' transports and of the
	// within-model proposals (nil: FullConditional, or Laplace
	// when Informed, whose weights need every model's evidence).
	Proposal Proposal
	// Informed chooses the term to add or drop by locally balanced weights
	// from the models' Laplace evidences (see kernels.SelectionSettings).
	Informed bool
	// Kernel tunes the moves (nil: kernels' defaults); its Informed is
	// overridden by Informed.
	Kernel *kernels.SelectionSettings
	// Start is the model the chains start in (default: no terms).
	Start *ppl.Terms
	// Top is the number of most visited models reported (default 20).
	Top int
	// DrawsDir, when set, receives one CmdStan CSV file per chain
	// (select-<chain>.csv) with the kept steps: lp__, accept_stat__,
	// size__, then an indicator column per term (gamma.<name>) and the
	// unconstrained parameters in the saturated layout (0 for an inactive
	// term).
	DrawsDir string
	// Progress, when set, is called about every 1% of a chain's steps
	// (from the chains' goroutines, one call at a time).
	Progress func(pipeline.Progress)

	// record, when set, receives every kept step's model and point (from
	// the chain's goroutine): a first pass's training draws.
	record func(chain int, active []int, theta []float64)
}

func (s *Settings) withDefaults() Settings {
	var o Settings
	if s != nil {
		o = *s
	}
	runs.OrDefault(&o.Chains, DefaultChains)
	runs.OrDefault(&o.Warmup, DefaultWarmup)
	runs.OrDefault(&o.Steps, DefaultSteps)
	runs.OrDefault(&o.Top, DefaultTop)
	if o.Proposal == nil {
		o.Proposal = FullConditional{}
		if o.Informed {
			o.Proposal = Laplace{}
		}
	}
	return o
}

func (s *Settings) validate(sp *ppl.SelectionSpace) error {
	if s.Chains < 1 || s.Steps < 1 || s.Warmup < 0 || s.Top < 1 {
		return fmt.Errorf("selection: Select needs Chains ≥ 1, Steps ≥ 1, Warmup ≥ 0, Top ≥ 1; got %d, %d, %d, %d", s.Chains, s.Steps, s.Warmup, s.Top)
	}
	seen := map[int]bool{}
	for _, c := range s.Shard {
		if c < 0 || c >= s.Chains || seen[c] {
			return fmt.Errorf("selection: shard lists chain %d of %d (or twice)", c, s.Chains)
		}
		seen[c] = true
	}
	if s.Shard != nil && len(s.Shard) == 0 {
		return errors.New("selection: empty shard")
	}
	if s.Start != nil {
		if err := sp.Check(*s.Start); err != nil {
			return fmt.Errorf("selection: start model: %w", err)
		}
	}
	return nil
}

// Select runs variable selection over the models of sp: chains of the
// transdimensional selection kernel (add, drop or swap one term, the
// parameters carried by each model's transport, by default the full
// model's Laplace Gaussian conditioned on the missing terms, then
// within-model moves), in parallel, each with its own random stream from Seed and its
// own cache of models built on first visit. It returns each term's
// posterior inclusion probability ± MCSE and R̂, the most visited models
// and the expected model size.
//
// When ctx is cancelled, Select returns the result of the steps made so
// far with ctx's error.
func Run(ctx context.Context, sp *ppl.SelectionSpace, settings *Settings) (*Result, error) {
	if sp == nil {
		return nil, errors.New("selection: Select: nil selection space")
	}
	s := settings.withDefaults()
	if err := s.validate(sp); err != nil {
		return nil, err
	}
	chains := s.Shard
	if chains == nil {
		chains = make([]int, s.Chains)
		for i := range chains {
			chains[i] = i
		}
	}
	if s.DrawsDir != "" {
		if err := runs.CheckDir(s.DrawsDir); err != nil {
			err = fmt.Errorf("selection: %w", err)
			return nil, err
		}
	}
	start := time.Now()
	sh, err := newSelShared(ctx, sp.Clone(), &s)
	if err != nil {
		return nil, err
	}
	runs := make([]*selChain, len(chains))
	var progMu sync.Mutex
	err = parallel.For(ctx, len(chains), func(ctx context.Context, i int) error {
		r, err := runSelectChain(ctx, sh, &s, chains[i], start, &progMu)
		runs[i] = r
		return err
	})
	if !sh.prop.Laplace() && ctx.Err() == nil {
		if err2 := sh.topEvidence(runs, s.Top); err2 != nil && err == nil {
			err = err2
		}
	}
	res := newSelectResult(sp, &s, chains, runs)
	res.Built = sh.sp.Builds()
	res.setFlagged(int(sh.flagged.Load()))
	res.Seconds = time.Since(start).Seconds()
	if err != nil {
		if ctx.Err() != nil && res.Steps > 0 {
			return res, ctx.Err()
		}
		return nil, err
	}
	return res, nil
}

// selChain is what one chain leaves: the model of every kept step (as an
// index into models) and its counters.
type selChain struct {
	chain    int
	models   []ppl.Terms
	ids      []int32
	evidence []float64 // Laplace log evidence of each model in models
	moves    [4]struct{ proposed, accepted int }
	within   struct{ proposed, accepted int }
}

func runSelectChain(ctx context.Context, sh *selShared, s *Settings, chain int, t0 time.Time, progMu *sync.Mutex) (*selChain, error) {
	sp := sh.sp
	rng := runs.Stream(s.Seed, "select", chain)
	tg := newSelTarget(sh)
	ks := kernels.SelectionSettings{}
	if s.Kernel != nil {
		ks = *s.Kernel
	}
	ks.Informed = s.Informed
	k, err := kernels.NewSelectionKernel(tg, &ks)
	if err != nil {
		return nil, err
	}
	var active []int
	if s.Start != nil {
		active = s.Start.Indices()
	}
	st, err := k.Init(active, nil)
	if err != nil {
		return nil, err
	}
	out := &selChain{chain: chain, ids: make([]int32, 0, s.Steps)}
	index := map[string]int32{}
	var csv *selectCSV
	if s.DrawsDir != "" {
		if csv, err = newSelectCSV(s.DrawsDir, sp, s, chain); err != nil {
			return out, err
		}
		defer csv.close()
	}
	total := s.Warmup + s.Steps
	every := max(1, total/100)
	for i := range total {
		if i%256 == 0 && ctx.Err() != nil {
			return out, ctx.Err()
		}
		info, err := k.Step(rng, st)
		if err != nil {
			return out, fmt.Errorf("selection: chain %d step %d: %w", chain, i, err)
		}
		if i >= s.Warmup {
			out.moves[info.Move].proposed++
			if info.Accepted {
				out.moves[info.Move].accepted++
			}
			out.within.proposed += info.WithinProposed
			out.within.accepted += info.WithinAccepted
			e := st.Model.(*selEntry)
			id, ok := index[e.key]
			if !ok {
				id = int32(len(out.models))
				index[e.key] = id
				out.models = append(out.models, e.terms)
				out.evidence = append(out.evidence, e.LogEvidence())
			}
			out.ids = append(out.ids, id)
			if s.record != nil {
				s.record(chain, st.Active, st.Theta)
			}
			if csv != nil {
				if err := csv.write(st, info, tg.sp); err != nil {
					return out, err
				}
			}
		}
		if s.Progress != nil && ((i+1)%every == 0 || i == total-1) {
			progMu.Lock()
			s.Progress(pipeline.Progress{Stage: "chains", Model: -1, Chain: chain, Done: i + 1, Total: total, Visited: len(out.models), Elapsed: time.Since(t0)})
			progMu.Unlock()
		}
	}
	return out, nil
}

// topEvidence gives the most visited models (the s.Top first, and any
// tied with the last) their Laplace evidence after the chains have run,
// for families that fit none per model: the result's evidence column and
// renormalised estimates then cost Top fits.
func (t *selShared) topEvidence(runs []*selChain, top int) error {
	counts := map[string]int{}
	terms := map[string]ppl.Terms{}
	for _, c := range runs {
		if c == nil {
			continue
		}
		for _, id := range c.ids {
			k := c.models[id].Key()
			if counts[k] == 0 {
				terms[k] = c.models[id]
			}
			counts[k]++
		}
	}
	cs := make([]int, 0, len(counts))
	for _, n := range counts {
		cs = append(cs, n)
	}
	slices.Sort(cs)
	if len(cs) == 0 {
		return nil
	}
	least := cs[max(0, len(cs)-top)]
	keys := make([]string, 0, top)
	for k, n := range counts {
		if n >= least {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys) // fit in a fixed order
	ev := map[string]float64{}
	for _, k := range keys {
		_, lap, err := t.laplace(terms[k])
		if err != nil {
			return err
		}
		ev[k] = lap.LogEvidence
	}
	for _, c := range runs {
		if c == nil {
			continue
		}
		for id, tm := range c.models {
			if v, ok := ev[tm.Key()]; ok {
				c.evidence[id] = v
			}
		}
	}
	return nil
}

// selShared is what the chains of one Select share: the prepared proposal
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
	done   chan struct{}
	err    error
}

func newSelShared(ctx context.Context, sp *ppl.SelectionSpace, s *Settings) (*selShared, error) {
	t := &selShared{sp: sp, order: list.New(), items: map[string]*list.Element{}}
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
	if s.Informed && !t.prop.Laplace() {
		return nil, fmt.Errorf("selection: Informed weighs neighbours by their Laplace evidences, which the %v proposals do not fit (use Laplace)", s.Proposal)
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
	e := &sharedEntry{key: key, terms: tm, done: make(chan struct{})}
	t.items[key] = t.order.PushFront(e)
	for t.order.Len() > t.sp.CacheBound() {
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

// LogEvidence is the model's Laplace log evidence, NaN without a fit.
func (e *selEntry) LogEvidence() float64 {
	if e.lap == nil {
		return math.NaN()
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
	return t.sp.LogPrior(t.terms)
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
	for t.order.Len() > t.sp.CacheBound() {
		last := t.order.Back()
		t.order.Remove(last)
		delete(t.items, last.Value.(*selEntry).key)
	}
	return e, nil
}

// selectCSV writes one chain's kept steps in CmdStan's CSV layout.
type selectCSV struct {
	f    *os.File
	w    *draws.CSVWriter
	p, A int
	S    int
	row  []float64
	diag []float64
}

func newSelectCSV(dir string, sp *ppl.SelectionSpace, s *Settings, chain int) (*selectCSV, error) {
	P, A, S := sp.P(), sp.Always(), sp.Shared()
	var names []string
	for _, n := range sp.Names() {
		names = append(names, "gamma."+csvName(n))
	}
	for i := range A {
		names = append(names, "always."+strconv.Itoa(i+1))
	}
	for _, n := range sp.Names() {
		names = append(names, "theta."+csvName(n))
	}
	for i := range S {
		names = append(names, "shared."+strconv.Itoa(i+1))
	}
	f, err := os.Create(filepath.Join(dir, "select-"+strconv.Itoa(chain)+".csv"))
	if err != nil {
		return nil, fmt.Errorf("selection: draws: %w", err)
	}
	w, err := draws.NewCSVWriter(f, draws.Layout{Diagnostics: []string{"lp__", "accept_stat__", "size__"}, Params: names}, []draws.Setting{
		{Key: "method", Value: "select"}, {Key: "seed", Value: strconv.FormatUint(s.Seed, 10)},
		{Key: "chain", Value: strconv.Itoa(chain)}, {Key: "proposal", Value: s.Proposal.String()},
		{Key: "parameters", Value: "unconstrained"},
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return &selectCSV{f: f, w: w, p: P, A: A, S: S, row: make([]float64, len(names)), diag: make([]float64, 3)}, nil
}

func csvName(n string) string {
	out := []rune{}
	for _, r := range n {
		switch r {
		case ',', '"', ' ', '\t', '\n':
			r = '_'
		}
		out = append(out, r)
	}
	return string(out)
}

func (c *selectCSV) write(st *kernels.SelectionState, info kernels.SelectionInfo, sp *ppl.SelectionSpace) error {
	P, A, S := c.p, c.A, c.S
	clear(c.row)
	for j, a := range st.Active {
		c.row[a] = 1
		c.row[P+A+a] = st.Theta[A+j]
	}
	copy(c.row[P:P+A], st.Theta[:A])
	copy(c.row[P+A+P:], st.Theta[len(st.Theta)-S:])
	c.diag[0], c.diag[1], c.diag[2] = st.LogPrior+st.LogDensity, info.AcceptProb, float64(len(st.Active))
	return c.w.Write(c.row, c.diag)
}

func (c *selectCSV) close() error {
	err := c.w.Flush()
	if e := c.f.Close(); err == nil {
		err = e
	}
	return err
}
