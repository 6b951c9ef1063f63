package flows

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/internal/scalar"
	"github.com/trjgo/trj/internal/training"
)

// ConditionalSpec describes the models that share a saturated space of
// dimension MaxDim in a conditional flow.
type ConditionalSpec struct {
	// Contexts[k] is model k's context vector, for example its inclusion
	// vector or a one-hot code; all have the same length.
	Contexts [][]float64
	// Active[k][i] reports whether coordinate i of the saturated space is a
	// parameter of model k; the other coordinates are auxiliary variables,
	// distributed as N(0, 1) under the augmented target.
	Active [][]bool
}

func (s ConditionalSpec) validate() (maxDim, ctx int, err error) {
	if len(s.Contexts) == 0 || len(s.Contexts) != len(s.Active) {
		return 0, 0, fmt.Errorf("flows: %d contexts and %d activity masks", len(s.Contexts), len(s.Active))
	}
	ctx, maxDim = len(s.Contexts[0]), len(s.Active[0])
	if ctx == 0 || maxDim == 0 {
		return 0, 0, errors.New("flows: empty context or saturated space")
	}
	for k := range s.Contexts {
		if len(s.Contexts[k]) != ctx || len(s.Active[k]) != maxDim {
			return 0, 0, fmt.Errorf("flows: model %d has context length %d and %d coordinates, model 0 has %d and %d",
				k, len(s.Contexts[k]), len(s.Active[k]), ctx, maxDim)
		}
		if !scalar.AllFinite(s.Contexts[k]) {
			return 0, 0, fmt.Errorf("flows: model %d has a non-finite context", k)
		}
	}
	return maxDim, ctx, nil
}

func (s ConditionalSpec) clone() ConditionalSpec {
	c := ConditionalSpec{Contexts: make([][]float64, len(s.Contexts)), Active: make([][]bool, len(s.Active))}
	for k := range s.Contexts {
		c.Contexts[k] = append([]float64(nil), s.Contexts[k]...)
		c.Active[k] = append([]bool(nil), s.Active[k]...)
	}
	return c
}

// baseHidden is the width of the MLP that maps a context to the conditional
// base distribution's means and log-scales.
const baseHidden = 32

// ConditionalRQMA is the conditional transport T̃(·|k) = b_k⁻¹ ∘ h⁻¹ ∘ F(·|k)
// ∘ h ∘ s(·|k) of the paper's CTRJ, on the saturated space of dimension
// MaxDim. s(·|k) standardises model k's own coordinates with statistics
// pooled over the models and passes auxiliary coordinates through (for a
// standard normal reference, Φ⁻¹∘F_ν is the identity); F(·|k) is a stack of
// masked autoregressive spline layers whose MADE conditioners receive model
// k's context in every hidden unit; and b_k standardises the conditional
// diagonal normal base, whose means and log-scales are an MLP of the
// context, so that the reference of T̃(·|k) is N(0, I) for every k.
//
// A ConditionalRQMA keeps scratch space; use Clone for other goroutines.
type ConditionalRQMA struct {
	cfg    RQMAConfig
	spec   ConditionalSpec
	net    *stack
	params []float64 // stack parameters, then the base MLP's
	shift  []float64
	scale  []float64
	c      float64
	work   *pointWork
	buf    []float64
	hb     []float64 // base MLP hidden activations
	base   []float64 // base means then log-scales
	// Compiled single-point maps and each model's standardisation.
	fwd, inv *condProgram
	data     *condData
	out      []float64
}

// NewConditionalRQMA returns an untrained conditional flow for the models of
// spec, with pooled standardisation scale ⊙ (ξ − shift) of the active
// coordinates and weights initialised from seed.
func NewConditionalRQMA(spec ConditionalSpec, shift, scale []float64, cfg RQMAConfig, seed uint64) (*ConditionalRQMA, error) {
	n, _, err := spec.validate()
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(n); err != nil {
		return nil, err
	}
	if len(shift) != n || len(scale) != n {
		return nil, fmt.Errorf("flows: %d shifts and %d scales for dimension %d", len(shift), len(scale), n)
	}
	for i := range shift {
		if !scalar.Finite(shift[i]) || !(scale[i] > 0) || math.IsInf(scale[i], 0) {
			return nil, fmt.Errorf("flows: standardisation %d: shift %v, scale %v", i, shift[i], scale[i])
		}
	}
	f := newConditional(spec.clone(), cfg)
	copy(f.shift, shift)
	copy(f.scale, scale)
	rng := rand.New(rand.NewPCG(seed, 0xc0de))
	f.net.init(f.params, rng)
	// Base MLP: default init for the hidden layer; zero output layer so the
	// initial base is N(0, I) for every model.
	bp := f.baseParams(f.params)
	ctx := f.net.ctx
	b := 1 / math.Sqrt(float64(ctx))
	for i := range bp[:baseHidden*ctx+baseHidden] {
		bp[i] = b * (2*rng.Float64() - 1)
	}
	f.data = newCondData(f)
	var err2 error
	if f.fwd, err2 = f.compileCond(false); err2 != nil {
		return nil, err2
	}
	if f.inv, err2 = f.compileCond(true); err2 != nil {
		return nil, err2
	}
	f.out = make([]float64, n+1)
	return f, nil
}

func newConditional(spec ConditionalSpec, cfg RQMAConfig) *ConditionalRQMA {
	n, ctx := len(spec.Active[0]), len(spec.Contexts[0])
	net := newStack(n, cfg.HiddenPerDim*n, cfg.Bins, ctx, cfg.Layers)
	return &ConditionalRQMA{
		cfg:    cfg,
		spec:   spec,
		net:    net,
		params: make([]float64, net.numParams()+baseSize(n, ctx)),
		shift:  make([]float64, n),
		scale:  make([]float64, n),
		c:      cfg.sigmoidScale(),
		work:   net.newPointWork(),
		buf:    make([]float64, n),
		hb:     make([]float64, baseHidden),
		base:   make([]float64, 2*n),
	}
}

func baseSize(n, ctx int) int { return baseHidden*ctx + baseHidden + 2*n*baseHidden + 2*n }

func (f *ConditionalRQMA) baseParams(p []float64) []float64 { return p[f.net.numParams():] }

// MaxDim returns the dimension of the saturated space.
func (f *ConditionalRQMA) MaxDim() int { return f.net.n }

// NumModels returns the number of models the flow is conditioned on.
func (f *ConditionalRQMA) NumModels() int { return len(f.spec.Contexts) }

// Config returns the flow's architecture.
func (f *ConditionalRQMA) Config() RQMAConfig { return f.cfg }

// Clone returns a flow for another goroutine: it shares f's parameters,
// specification and standardisation (never changed once fitted) and owns
// its scratch space.
func (f *ConditionalRQMA) Clone() *ConditionalRQMA {
	g := *f
	g.work = f.net.newPointWork()
	g.buf = make([]float64, f.net.n)
	g.hb = make([]float64, baseHidden)
	g.base = make([]float64, 2*f.net.n)
	g.fwd, g.inv = f.fwd.clone(), f.inv.clone()
	g.out = make([]float64, f.net.n+1)
	return &g
}

func (f *ConditionalRQMA) check(k int, a, b []float64) error {
	if k < 0 || k >= len(f.spec.Contexts) {
		return fmt.Errorf("flows: model %d out of range [0, %d)", k, len(f.spec.Contexts))
	}
	if len(a) != f.net.n || len(b) != f.net.n {
		return fmt.Errorf("flows: %d→%d values, saturated dimension %d", len(a), len(b), f.net.n)
	}
	return nil
}

// Forward sets z = T̃(ξ|k) and returns log|det J_T̃(ξ|k)|.
func (f *ConditionalRQMA) Forward(k int, xi, z []float64) (float64, error) {
	if err := f.check(k, xi, z); err != nil {
		return 0, err
	}
	return mapResult("Forward", f.fwd.run(f.data, false, f.spec.Contexts[k], k, xi, f.out), f.out, z)
}

// Inverse sets ξ = T̃⁻¹(z|k) and returns log|det J_T̃⁻¹(z|k)|.
func (f *ConditionalRQMA) Inverse(k int, z, xi []float64) (float64, error) {
	if err := f.check(k, z, xi); err != nil {
		return 0, err
	}
	return mapResult("Inverse", f.inv.run(f.data, true, f.spec.Contexts[k], k, z, f.out), f.out, xi)
}

// LogDensity returns the flow's log-density of ξ given model k, which
// includes the auxiliary coordinates.
func (f *ConditionalRQMA) LogDensity(k int, xi []float64) (float64, error) {
	z := f.work.b
	ld, err := f.Forward(k, xi, z)
	if err != nil {
		return math.Inf(-1), err
	}
	return stdNormalLogPDF(z) + ld, nil
}

// FitConditionalRQMA trains a conditional flow on samples x (rows of length
// MaxDim; entries at model models[r]'s auxiliary coordinates are ignored and
// redrawn from N(0, 1) at every minibatch). Sample weights (opts.Weights,
// nil: equal) are renormalised so that every model has the same total
// weight. The standardisation uses each coordinate's weighted statistics
// pooled over the models in which it is active. Cancelling ctx stops
// training between Adam steps, as for FitRQMA.
func FitConditionalRQMA(ctx context.Context, spec ConditionalSpec, x [][]float64, models []int, cfg RQMAConfig, opts TrainOptions) (*ConditionalRQMA, *TrainReport, error) {
	n, _, err := spec.validate()
	if err != nil {
		return nil, nil, err
	}
	if len(models) != len(x) {
		return nil, nil, fmt.Errorf("flows: %d samples but %d model labels", len(x), len(models))
	}
	if m, err := training.CheckRows(x); err != nil {
		return nil, nil, err
	} else if m != n {
		return nil, nil, fmt.Errorf("flows: samples of length %d, saturated dimension %d", m, n)
	}
	if err := opts.validate(len(x)); err != nil {
		return nil, nil, err
	}
	K := len(spec.Contexts)
	tot := make([]float64, K)
	for r, k := range models {
		if k < 0 || k >= K {
			return nil, nil, fmt.Errorf("flows: sample %d has model %d out of range [0, %d)", r, k, K)
		}
		tot[k] += weightOf(opts.Weights, r)
	}
	w := make([]float64, len(x))
	for r, k := range models {
		if tot[k] > 0 { // else every sample of model k has weight zero
			w[r] = weightOf(opts.Weights, r) / tot[k]
		}
	}
	use := make([][]bool, len(x))
	for r, k := range models {
		use[r] = spec.Active[k]
	}
	shift, scale := make([]float64, n), make([]float64, n)
	for i := range shift {
		m, sd, cnt := pooledStats(x, w, use, i)
		switch {
		case cnt == 0: // never a parameter: keep the identity
			shift[i], scale[i] = 0, 1
		case cnt < 2 || !(sd > 0) || !scalar.Finite(sd):
			return nil, nil, fmt.Errorf("flows: coordinate %d has %d samples and standard deviation %v", i, cnt, sd)
		default:
			shift[i], scale[i] = m, 1/sd
		}
	}
	f, err := NewConditionalRQMA(spec, shift, scale, cfg, opts.Seed)
	if err != nil {
		return nil, nil, err
	}
	o := opts
	o.Weights = w
	np := f.net.numParams()
	spans := append(f.net.freeSpans(0), [2]int{np, len(f.params)})
	rep, err := train(ctx, newGraphLearner(&condBatch{f: f, x: x, models: models}, f.params, spans), len(x), w, o)
	return f, rep, err
}

func weightOf(w []float64, r int) float64 {
	if w == nil {
		return 1
	}
	return w[r]
}

func pooledStats(x [][]float64, w []float64, use [][]bool, i int) (mean, sd float64, cnt int) {
	var sw, sx float64
	for r, row := range x {
		if use[r][i] && w[r] > 0 {
			sw += w[r]
			sx += w[r] * row[i]
			cnt++
		}
	}
	if cnt == 0 {
		return 0, 0, 0
	}
	mean = sx / sw
	var ss float64
	for r, row := range x {
		if use[r][i] && w[r] > 0 {
			d := row[i] - mean
			ss += w[r] * d * d
		}
	}
	return mean, math.Sqrt(ss / sw), cnt
}

// condBatch is the log-density of a conditional flow on a batch of samples
// x[idx] of models models[idx], auxiliary coordinates redrawn from N(0, 1):
// the per-row standardisation, the sigmoid, the stack with the models'
// contexts, the logit and the conditional base as one graph.
type condBatch struct {
	f      *ConditionalRQMA
	x      [][]float64
	models []int
}

func (r *condBatch) numParams() int { return len(r.f.params) }

func (r *condBatch) build(b *gb, rows int) (*gorgonia.Node, []*gorgonia.Node) {
	f := r.f
	n, c := f.net.n, f.net.ctx
	x := b.data("x", nil, rows, n)
	a := b.data("scale", nil, rows, n)
	off := b.data("offset", nil, rows, n)
	ldStd := b.data("ldStd", nil, rows)
	ctx := b.data("context", nil, rows, c)
	v := b.n(gorgonia.Add(b.n(gorgonia.HadamardProd(x, a)), off))
	if b.err != nil {
		return nil, nil
	}
	logq := f.logDensityGraph(b, v, ldStd, ctx)
	return logq, []*gorgonia.Node{x, a, off, ldStd, ctx}
}

func (r *condBatch) cacheKey(rows int) any {
	return trainKey{kind: "conditional", n: r.f.net.n, ctx: r.f.net.ctx, cfg: r.f.cfg, rows: rows}
}

func (r *condBatch) fill(idx []int, rng randSource, bufs [][]float64) {
	f := r.f
	n, c := f.net.n, f.net.ctx
	x, a, off, ldStd, ctx := bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]
	for k, j := range idx {
		m := r.models[j]
		act := f.spec.Active[m]
		copy(ctx[k*c:(k+1)*c], f.spec.Contexts[m])
		ld := 0.0
		for i, t := range r.x[j] {
			if act[i] {
				x[k*n+i], a[k*n+i], off[k*n+i] = t, f.scale[i], -f.shift[i]*f.scale[i]
				ld += math.Log(f.scale[i])
			} else {
				x[k*n+i], a[k*n+i], off[k*n+i] = rng.NormFloat64(), 1, 0
			}
		}
		ldStd[k] = ld
	}
}

// logDensityGraph adds log q(·|k) for standardised rows v (B, n) whose
// standardisation has per-row log-determinants ldStd (B), with the rows'
// contexts ctx (B, ctx).
func (f *ConditionalRQMA) logDensityGraph(b *gb, v, ldStd, ctx *gorgonia.Node) *gorgonia.Node {
	z, ld := f.forwardGraph(b, v, ldStd, ctx)
	if b.err != nil {
		return nil
	}
	return b.n(gorgonia.Add(ld, b.stdNormalRows(z)))
}

// baseGraph adds the conditional base's means and log-scales (B, n each)
// for contexts ctx (B, ctx).
func (f *ConditionalRQMA) baseGraph(b *gb, ctx *gorgonia.Node) (mean, ls *gorgonia.Node) {
	n, c := f.net.n, f.net.ctx
	o := f.net.numParams()
	w1 := b.view(o, baseHidden, c)
	b1 := b.view(o+baseHidden*c, baseHidden)
	w2 := b.view(o+baseHidden*c+baseHidden, 2*n, baseHidden)
	b2 := b.view(o+baseHidden*c+baseHidden+2*n*baseHidden, 2*n)
	if b.err != nil {
		return nil, nil
	}
	hb := b.n(ops.MaskedLinear(ctx, w1, b1, nil, ops.Tanh))
	if b.err != nil {
		return nil, nil
	}
	bo := b.n(ops.MaskedLinear(hb, w2, b2, nil, ops.Identity))
	if b.err != nil {
		return nil, nil
	}
	mean = b.n(ops.Slice(bo, nil, gorgonia.S(0, n)))
	ls = b.n(ops.Slice(bo, nil, gorgonia.S(n, 2*n)))
	return mean, ls
}

// forwardGraph adds z = T̃(ξ|k) for standardised rows v and the per-row
// log-determinant.
func (f *ConditionalRQMA) forwardGraph(b *gb, v, ldStd, ctx *gorgonia.Node) (z, ld *gorgonia.Node) {
	w, ld0, ld1, ld2 := b.squashedStack(f.net, f.c, v, ctx)
	if b.err != nil {
		return nil, nil
	}
	mean, ls := f.baseGraph(b, ctx)
	if b.err != nil {
		return nil, nil
	}
	z = b.n(gorgonia.HadamardProd(b.n(gorgonia.Sub(w, mean)), b.n(gorgonia.Exp(b.n(gorgonia.Neg(ls))))))
	ld = b.n(gorgonia.Add(b.n(gorgonia.Add(ld0, ld1)), ld2))
	ld = b.n(gorgonia.Sub(b.n(gorgonia.Add(ld, ldStd)), b.rowSum(ls)))
	return z, ld
}
