package selection

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Amortised is a Proposal that needs no fit per model: one
// conditional RQMA flow on the saturated space (always-in, every term,
// shared coordinates), whose context is the model's 0/1 inclusion vector,
// is trained on the draws of a short first pass (a Run with
// FullConditional by default, discarded), then frozen for the whole
// run. Every model,
// including the many the first pass never visited, jumps through it as in
// the paper's CTRJ (Algorithm 2: the missing terms' coordinates are N(0, 1)
// auxiliaries), and moves within itself by independence and random-walk
// steps in the flow's reference coordinates. No model but the full one
// gets a Laplace fit (no finite-difference Hessian per model), and models
// report no evidence.
type Amortised struct {
	// Pass is the first pass: its chains, warm-up and kept steps
	// (default 2, 200, 1000) and proposal (default FullConditional);
	// Seed and Start are the run's.
	Pass Settings
	// MaxDraws bounds the training draws, thinned evenly from the first
	// pass's kept steps (default 2000).
	MaxDraws int
	// Flow configures the flow and its training (nil: FlowConfig's
	// defaults).
	Flow *FlowConfig
}

// FlowConfig is the conditional flow of Amortised and
// CTRJ.
type FlowConfig struct {
	// RQMA is the architecture (default 2 layers, 8 bins, MADE hidden
	// width 4 per dimension, plain sigmoid: small, since every step of
	// every chain evaluates it several times).
	RQMA flows.RQMAConfig
	// Train configures training (default flows.ConditionalTrainOptions
	// with at most 500 iterations); its Seed is the run's.
	Train flows.TrainOptions
}

func (c *FlowConfig) orDefault() FlowConfig {
	if c != nil {
		return *c
	}
	o := flows.ConditionalTrainOptions()
	o.Iterations = 500
	o.DoubleAt = []int{150, 300}
	return FlowConfig{RQMA: flows.RQMAConfig{Layers: 2, Bins: 8, HiddenPerDim: 4, SigmoidScale: 1}, Train: o}
}

func (Amortised) String() string { return "amortised" }

// Prepare runs the first pass and trains the flow on its draws.
func (a Amortised) Prepare(ctx context.Context, in *Preparation) (Proposer, error) {
	pass := a.Pass
	runs.OrDefault(&pass.Chains, 2)
	runs.OrDefault(&pass.Warmup, 200)
	runs.OrDefault(&pass.Steps, 1000)
	runs.OrDefault(&a.MaxDraws, 2000)
	dr, err := firstPass(ctx, in, pass, a.MaxDraws)
	if err != nil {
		return nil, err
	}
	sp := in.Space
	dr.dropRare(sp, 10)
	if len(dr.x) == 0 {
		return nil, errors.New("first pass: no draws left after dropping the rarely visited terms")
	}
	spec := flows.ConditionalSpec{}
	models := make([]int, len(dr.x))
	for r := range dr.x {
		c, act := selectContext(sp, dr.terms[r])
		spec.Contexts = append(spec.Contexts, c)
		spec.Active = append(spec.Active, act)
		models[r] = r // one model per draw: every draw weighs the same
	}
	return fitSelectFlow(ctx, in, a.Flow, spec, dr.x, models, "amortised")
}

// CTRJ is today's CTRJ as a baseline Proposal: NUTS pilots of a
// few models (by default the model without terms, the full model and the
// most visited model of a short first pass as Amortised's), one
// conditional flow trained on them as Amortised's is, used for every
// model's jumps and within-model moves.
type CTRJ struct {
	// Models are the piloted models (nil: none, all, and the first pass's
	// most visited).
	Models []ppl.Terms
	// Pass is the first pass (as Amortised's; unused when Models is
	// set).
	Pass Settings
	// Warmup and Draws are each pilot's NUTS warm-up and kept draws
	// (default 500 and 1000).
	Warmup, Draws int
	// Flow configures the flow (nil: FlowConfig's defaults).
	Flow *FlowConfig
}

func (CTRJ) String() string { return "ctrj" }

// Prepare runs the pilots and trains the flow on their draws.
func (c CTRJ) Prepare(ctx context.Context, in *Preparation) (Proposer, error) {
	sp := in.Space
	runs.OrDefault(&c.Warmup, 500)
	runs.OrDefault(&c.Draws, 1000)
	models := c.Models
	if models == nil {
		none, _ := ppl.NewTerms(sp.P())
		all := make([]int, sp.P())
		for i := range all {
			all[i] = i
		}
		full, _ := ppl.NewTerms(sp.P(), all...)
		models = []ppl.Terms{none, full}
		pass := c.Pass
		runs.OrDefault(&pass.Chains, 2)
		runs.OrDefault(&pass.Warmup, 200)
		runs.OrDefault(&pass.Steps, 1000)
		dr, err := firstPass(ctx, in, pass, 1)
		if err != nil {
			return nil, err
		}
		if k := dr.top.Key(); k != none.Key() && k != full.Key() {
			models = append(models, dr.top)
		}
	}
	var spec flows.ConditionalSpec
	var x [][]float64
	var lab []int
	for k, tm := range models {
		if err := sp.Check(tm); err != nil {
			return nil, fmt.Errorf("piloted model %d: %w", k, err)
		}
		m, err := sp.Build(tm)
		if err != nil {
			return nil, err
		}
		res, err := kernels.Sample(ctx, func(int) (kernels.Target, error) { return m.Clone().(*ppl.GraphModel), nil },
			&kernels.SampleSettings{Chains: 1, Warmup: c.Warmup, Draws: c.Draws, Seed: in.Seed("ctrj pilot", k)})
		if err != nil {
			return nil, fmt.Errorf("pilot of model %v: %w", tm, err)
		}
		ctxv, act := selectContext(sp, tm)
		spec.Contexts = append(spec.Contexts, ctxv)
		spec.Active = append(spec.Active, act)
		idx := tm.Indices()
		ch := res.Chains[0]
		for r := 0; r+ch.Dim <= len(ch.Draws); r += ch.Dim {
			x = append(x, embedSaturated(sp, idx, ch.Draws[r:r+ch.Dim]))
			lab = append(lab, k)
		}
	}
	return fitSelectFlow(ctx, in, c.Flow, spec, x, lab, "ctrj")
}

// passDraws are a first pass's draws in the saturated layout, the model of
// each, and the most visited model.
type passDraws struct {
	x     [][]float64
	terms []ppl.Terms
	top   ppl.Terms
}

// dropRare removes the draws of models with a term that is in fewer than
// minCount draws, or whose coordinate does not vary over them, until none
// is left: the flow's standardisation needs a spread for every term it
// sees, and leaves a term it never sees to the identity.
func (d *passDraws) dropRare(sp *ppl.SelectionSpace, minCount int) {
	A := sp.Always()
	for {
		rare := map[int]bool{}
		for j := range sp.P() {
			n := 0
			lo, hi := math.Inf(1), math.Inf(-1)
			for r, tm := range d.terms {
				if tm.Has(j) {
					n++
					lo, hi = min(lo, d.x[r][A+j]), max(hi, d.x[r][A+j])
				}
			}
			if n > 0 && (n < minCount || !(hi > lo)) {
				rare[j] = true
			}
		}
		if len(rare) == 0 {
			return
		}
		keep := 0
		for r, tm := range d.terms {
			ok := true
			for j := range rare {
				if tm.Has(j) {
					ok = false
					break
				}
			}
			if ok {
				d.x[keep], d.terms[keep] = d.x[r], tm
				keep++
			}
		}
		d.x, d.terms = d.x[:keep], d.terms[:keep]
	}
}

// firstPass runs Run under settings pass and keeps
// at most maxDraws of its kept steps, evenly thinned.
func firstPass(ctx context.Context, in *Preparation, pass Settings, maxDraws int) (*passDraws, error) {
	sp := in.Space
	pass.Seed = in.Seed("first pass", 0)
	if pass.Proposal == nil {
		pass.Proposal = FullConditional{}
	}
	pass.Start = in.Settings.Start
	pass.Shard, pass.DrawsDir, pass.Progress = nil, "", nil
	if pass.Kernel == nil {
		pass.Kernel = in.Settings.Kernel
	}
	stride := max(1, pass.Chains*pass.Steps/max(1, maxDraws))
	type draw struct {
		active []int
		theta  []float64
	}
	per := make([][]draw, pass.Chains)
	step := make([]int, pass.Chains)
	pass.record = func(chain int, active []int, theta []float64) {
		if step[chain]%stride == 0 {
			per[chain] = append(per[chain], draw{append([]int(nil), active...), append([]float64(nil), theta...)})
		}
		step[chain]++
	}
	res, err := Run(ctx, sp, &pass)
	if err != nil {
		return nil, fmt.Errorf("first pass: %w", err)
	}
	out := &passDraws{}
	if len(res.Top) > 0 {
		out.top = res.Top[0].Terms
	}
	for _, c := range per {
		for _, d := range c {
			tm, err := ppl.NewTerms(sp.P(), d.active...)
			if err != nil {
				return nil, err
			}
			out.x = append(out.x, embedSaturated(sp, d.active, d.theta))
			out.terms = append(out.terms, tm)
		}
	}
	if len(out.x) == 0 {
		return nil, errors.New("first pass: no draws")
	}
	return out, nil
}

// selectContext returns model tm's context (its 0/1 inclusion vector) and
// its mask of the saturated space's coordinates.
func selectContext(sp *ppl.SelectionSpace, tm ppl.Terms) ([]float64, []bool) {
	A, P, S := sp.Always(), sp.P(), sp.Shared()
	c := make([]float64, P)
	act := make([]bool, A+P+S)
	for i := range A {
		act[i] = true
	}
	for i := range S {
		act[A+P+i] = true
	}
	for _, j := range tm.Indices() {
		c[j] = 1
		act[A+j] = true
	}
	return c, act
}

// embedSaturated writes a point of the model with terms active into the
// saturated layout (0 at the missing terms).
func embedSaturated(sp *ppl.SelectionSpace, active []int, theta []float64) []float64 {
	A, P, S := sp.Always(), sp.P(), sp.Shared()
	xi := make([]float64, A+P+S)
	copy(xi[:A], theta[:A])
	for r, j := range active {
		xi[A+j] = theta[A+r]
	}
	copy(xi[A+P:], theta[A+len(active):])
	return xi
}

func fitSelectFlow(ctx context.Context, in *Preparation, fc *FlowConfig, spec flows.ConditionalSpec, x [][]float64, models []int, stage string) (Proposer, error) {
	cfg := fc.orDefault()
	opts := cfg.Train
	opts.Seed = in.Seed(stage+" flow", 0)
	if opts.Workers == 0 {
		opts.Workers = 2
	}
	f, _, err := flows.FitConditionalRQMA(ctx, spec, x, models, cfg.RQMA, opts)
	if err != nil {
		return nil, fmt.Errorf("conditional flow: %w", err)
	}
	fp := &flowProposer{sp: in.Space, flow: f}
	fp.pool.New = func() any { return f.Clone() }
	return fp, nil
}

// flowProposer gives every model its transport from one conditional flow.
type flowProposer struct {
	sp   *ppl.SelectionSpace
	flow *flows.ConditionalRQMA
	pool sync.Pool // of clones of flow, for the chains' concurrent maps
}

func (*flowProposer) Laplace() bool { return false }

func (p *flowProposer) Model(tm ppl.Terms, _ *ppl.GraphModel, _ *flows.Laplace) (kernels.Transport, kernels.Transport, error) {
	c, act := selectContext(p.sp, tm)
	at, err := p.flow.At(c, act)
	if err != nil {
		return nil, nil, err
	}
	t := &pooledAt{at: at, pool: &p.pool}
	return t, t, nil
}

// pooledAt is a conditional flow's transport of one model, safe for
// concurrent use: each call maps with a clone of the flow from the pool
// (the clones give the same numbers, so which one a call gets does not
// matter).
type pooledAt struct {
	at   *flows.ConditionalAt
	pool *sync.Pool
}

func (t *pooledAt) Dim() int { return t.at.Dim() }
func (t *pooledAt) Forward(xi, z []float64) (float64, error) {
	g := t.pool.Get().(*flows.ConditionalRQMA)
	ld, err := t.at.With(g).Forward(xi, z)
	t.pool.Put(g)
	return ld, err
}
func (t *pooledAt) Inverse(z, xi []float64) (float64, error) {
	g := t.pool.Get().(*flows.ConditionalRQMA)
	ld, err := t.at.With(g).Inverse(z, xi)
	t.pool.Put(g)
	return ld, err
}
