package flows

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
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
		if !allFinite(s.Contexts[k]) {
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
		if !finite(shift[i]) || !(scale[i] > 0) || math.IsInf(scale[i], 0) {
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

// baseForward computes the base means and log-scales (out, length 2n) and
// the hidden activations hb for context ctx.
func baseForward(bp, ctx, hb, out []float64, n int) {
	c := len(ctx)
	w1, b1 := bp[:baseHidden*c], bp[baseHidden*c:baseHidden*c+baseHidden]
	w2 := bp[baseHidden*c+baseHidden : baseHidden*c+baseHidden+2*n*baseHidden]
	b2 := bp[baseHidden*c+baseHidden+2*n*baseHidden:]
	for j := 0; j < baseHidden; j++ {
		a := b1[j]
		for i, v := range ctx {
			a += w1[j*c+i] * v
		}
		hb[j] = math.Tanh(a)
	}
	for o := 0; o < 2*n; o++ {
		a := b2[o]
		for j, h := range hb {
			a += w2[o*baseHidden+j] * h
		}
		out[o] = a
	}
}

// baseBackward adds to gbp the gradient given g (∂ℓ/∂out, length 2n).
func baseBackward(bp, gbp, ctx, hb, g []float64, n int) {
	c := len(ctx)
	w2 := bp[baseHidden*c+baseHidden : baseHidden*c+baseHidden+2*n*baseHidden]
	gw1, gb1 := gbp[:baseHidden*c], gbp[baseHidden*c:baseHidden*c+baseHidden]
	gw2 := gbp[baseHidden*c+baseHidden : baseHidden*c+baseHidden+2*n*baseHidden]
	gb2 := gbp[baseHidden*c+baseHidden+2*n*baseHidden:]
	for j, h := range hb {
		gh := 0.0
		for o, go_ := range g {
			gw2[o*baseHidden+j] += go_ * h
			gh += w2[o*baseHidden+j] * go_
		}
		ga := gh * (1 - h*h)
		gb1[j] += ga
		for i, v := range ctx {
			gw1[j*c+i] += ga * v
		}
	}
	for o, go_ := range g {
		gb2[o] += go_
	}
}

// MaxDim returns the dimension of the saturated space.
func (f *ConditionalRQMA) MaxDim() int { return f.net.n }

// NumModels returns the number of models the flow is conditioned on.
func (f *ConditionalRQMA) NumModels() int { return len(f.spec.Contexts) }

// Config returns the flow's architecture.
func (f *ConditionalRQMA) Config() RQMAConfig { return f.cfg }

// Clone returns a copy with its own scratch space, for another goroutine.
func (f *ConditionalRQMA) Clone() *ConditionalRQMA {
	g := newConditional(f.spec, f.cfg) // spec is never mutated, so it is shared
	copy(g.params, f.params)
	copy(g.shift, f.shift)
	copy(g.scale, f.scale)
	return g
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
	n := f.net.n
	act, ctx := f.spec.Active[k], f.spec.Contexts[k]
	u := f.buf
	ld := 0.0
	for i, t := range xi {
		v := t
		if act[i] {
			v = f.scale[i] * (t - f.shift[i])
			ld += math.Log(f.scale[i])
		}
		s, d := squash(v, f.c)
		u[i] = s
		ld += d
	}
	ld += f.net.forwardPoint(f.params, u, ctx, f.work)
	baseForward(f.baseParams(f.params), ctx, f.hb, f.base, n)
	for i, y := range u {
		w, d := unsquash(y, f.c)
		ls := f.base[n+i]
		z[i] = (w - f.base[i]) * math.Exp(-ls)
		ld += d - ls
	}
	if !finite(ld) || !allFinite(z) {
		return ld, fmt.Errorf("flows: Forward: %w", ErrNonFinite)
	}
	return ld, nil
}

// Inverse sets ξ = T̃⁻¹(z|k) and returns log|det J_T̃⁻¹(z|k)|.
func (f *ConditionalRQMA) Inverse(k int, z, xi []float64) (float64, error) {
	if err := f.check(k, z, xi); err != nil {
		return 0, err
	}
	n := f.net.n
	act, ctx := f.spec.Active[k], f.spec.Contexts[k]
	baseForward(f.baseParams(f.params), ctx, f.hb, f.base, n)
	y := f.buf
	ld := 0.0 // forward log-determinant at the recovered point
	for i, zi := range z {
		ls := f.base[n+i]
		yi, d := squashInv(zi*math.Exp(ls)+f.base[i], f.c)
		y[i] = yi
		ld += d - ls
	}
	ld += f.net.inversePoint(f.params, y, ctx, f.work)
	for i, u := range y {
		v, d := unsquashInv(u, f.c)
		ld += d
		if act[i] {
			xi[i] = f.shift[i] + v/f.scale[i]
			ld += math.Log(f.scale[i])
		} else {
			xi[i] = v
		}
	}
	if !finite(ld) || !allFinite(xi) {
		return -ld, fmt.Errorf("flows: Inverse: %w", ErrNonFinite)
	}
	return -ld, nil
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
// pooled over the models in which it is active.
func FitConditionalRQMA(spec ConditionalSpec, x [][]float64, models []int, cfg RQMAConfig, opts TrainOptions) (*ConditionalRQMA, *TrainReport, error) {
	n, _, err := spec.validate()
	if err != nil {
		return nil, nil, err
	}
	if len(models) != len(x) {
		return nil, nil, fmt.Errorf("flows: %d samples but %d model labels", len(x), len(models))
	}
	if m, err := checkRows(x); err != nil {
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
		case cnt < 2 || !(sd > 0) || !finite(sd):
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
	rep, err := train(&condLearner{f: f, x: x, models: models}, len(x), w, o)
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

type condLearner struct {
	f      *ConditionalRQMA
	x      [][]float64
	models []int
}

func (l *condLearner) params() []float64    { return l.f.params }
func (l *condLearner) maskGrad(g []float64) { l.f.net.maskGrad(g[:l.f.net.numParams()]) }
func (l *condLearner) freeSpans() [][2]int {
	np := l.f.net.numParams()
	return append(l.f.net.freeSpans(0), [2]int{np, len(l.f.params)})
}

func (l *condLearner) newWorker() worker {
	n, c := l.f.net.n, l.f.net.ctx
	return &condWorker{
		l:    l,
		w:    l.f.net.newBatchWork(workerRows),
		u:    make([]float64, workerRows*n),
		ctx:  make([]float64, workerRows*c),
		ld:   make([]float64, workerRows),
		pre:  make([]float64, workerRows),
		gy:   make([]float64, workerRows*n),
		gl:   make([]float64, workerRows),
		hb:   make([]float64, baseHidden),
		base: make([]float64, 2*n),
		gb:   make([]float64, 2*n),
	}
}

type condWorker struct {
	l                       *condLearner
	w                       *batchWork
	u, ctx, ld, pre, gy, gl []float64
	hb, base, gb            []float64
}

func (k *condWorker) batch(p []float64, idx []int, wts []float64, rng *rand.Rand, g []float64) float64 {
	tot := 0.0
	k.l.f.net.transposeWeights(p, k.w)
	for lo := 0; lo < len(idx); lo += workerRows {
		hi := min(lo+workerRows, len(idx))
		var wc []float64
		if wts != nil {
			wc = wts[lo:hi]
		}
		tot += k.chunk(p, idx[lo:hi], wc, rng, g)
	}
	return tot
}

func (k *condWorker) chunk(p []float64, idx []int, wts []float64, rng *rand.Rand, g []float64) float64 {
	f := k.l.f
	n, c, cs := f.net.n, f.c, f.net.ctx
	rows := len(idx)
	for r, j := range idx {
		m := k.l.models[j]
		act := f.spec.Active[m]
		copy(k.ctx[r*cs:(r+1)*cs], f.spec.Contexts[m])
		ld := 0.0
		for i, t := range k.l.x[j] {
			var v float64
			if act[i] {
				v = f.scale[i] * (t - f.shift[i])
				ld += math.Log(f.scale[i])
			} else {
				v = rng.NormFloat64()
			}
			s, d := squash(v, c)
			k.u[r*n+i] = s
			ld += d
		}
		k.pre[r] = ld
	}
	f.net.forwardBatch(p, k.w, rows, k.u, k.ctx, k.ld)
	bp := f.baseParams(p)
	var gbp []float64
	if g != nil {
		gbp = f.baseParams(g)
	}
	tot := 0.0
	for r := range idx {
		wr := weightOf(wts, r)
		ctx := k.ctx[r*cs : (r+1)*cs]
		baseForward(bp, ctx, k.hb, k.base, n)
		ll := k.pre[r] + k.ld[r] - float64(n)*halfLog2Pi
		for i := 0; i < n; i++ {
			y := k.w.y[r*n+i]
			w, d := unsquash(y, c)
			ls := k.base[n+i]
			e := math.Exp(-ls)
			z := (w - k.base[i]) * e
			ll += d - ls - 0.5*z*z
			k.gy[r*n+i] = wr * (z*e/(c*y*(1-y)) + 1/y - 1/(1-y))
			k.gb[i] = -wr * z * e
			k.gb[n+i] = wr * (1 - z*z)
		}
		k.gl[r] = -wr
		tot -= wr * ll
		if g != nil {
			baseBackward(bp, gbp, ctx, k.hb, k.gb, n)
		}
	}
	if g != nil {
		f.net.backwardBatch(p, g, k.w, rows, k.gy, k.gl, k.ctx)
	}
	return tot
}
