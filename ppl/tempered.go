package ppl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"
)

// TemperedModel is a model's log-density split as log π = log prior + log
// likelihood with a way to draw from the prior part, the form that
// sequential Monte Carlo anneals (prior · likelihood^β, β from 0 to 1). It
// has the methods of kernels.TemperedModel, so
//
//	tm, err := model.Tempered()
//	res, err := kernels.RunSMC(ctx, func(int) (kernels.TemperedModel, error) { return tm.Clone(), nil }, nil)
//
// estimates the log evidence log ∫ π(θ) dθ (res.LogZ) and draws from the
// posterior. It has one of two forms, reported by FromPrior:
//
//   - The prior form. Every parameter has exactly one Sample statement on
//     itself (its prior) whose distribution can be sampled (Normal,
//     HalfNormal, LogNormal, StudentT, Cauchy, HalfCauchy, Exponential,
//     Gamma, InverseGamma, Beta, Uniform, Weibull, Laplace, Logistic,
//     MvNormal, Dirichlet, LKJCholesky) and whose support is the
//     parameter's (Real for Normal, StudentT, Cauchy, Laplace, Logistic
//     and MvNormal, the latter on a vector or on each row of a matrix;
//     Positive for the positive ones; Interval(0, 1) for Beta; Interval(a,
//     b) for Uniform(a, b); Simplex for Dirichlet; CholeskyFactorCorr for
//     LKJCholesky); the prior's arguments may depend on other parameters if there is
//     no cycle (hierarchical priors are drawn ancestrally). The prior part
//     is then the sum of those statements and of every log-Jacobian, drawn
//     exactly by SamplePrior; the likelihood part is everything else:
//     Sample statements on data, AddLogDensity terms and the constants.
//     Each part is compiled by ad to its own program.
//   - The reference form, otherwise (Reason says why) or when asked for by
//     TemperedReference: the "prior" part is a reference density q =
//     N(mean, diag(scale²)) on the unconstrained space (N(0, I) by default)
//     and the likelihood part is log π − log q, so SMC tempers from q to the
//     posterior and its log Z is still the evidence.
//
// In both forms logPrior + logLik is the model's LogDensity and the
// log-Jacobians are counted once. A TemperedModel keeps scratch space:
// give each goroutine its own Clone.
type TemperedModel struct {
	plan *temperPlan

	// The prior form.
	prior, lik evaluator
	w, outs    []float64   // a point being drawn; the prior program's outputs
	xs         []float64   // one parameter's constrained draw
	args       [][]float64 // its distribution arguments' values
	scratch    [maxArgs]float64

	// The reference form.
	model       *GraphModel
	mean, scale []float64
}

// temperSource is what a GraphModel keeps of its Builder to compile its
// tempered form on demand.
type temperSource struct {
	mu      *sync.Mutex // the Builder's: compiling adds nodes to g
	g       *gorgonia.ExprGraph
	wrt     []*gorgonia.Node
	terms   []*gorgonia.Node
	origins []termOrigin
	offset  float64

	done bool
	plan *temperPlan
	err  error
}

// temperPlan is the compiled tempered form, shared by clones.
type temperPlan struct {
	lay        *modelLayout
	fromPrior  bool
	reason     string      // why the reference form, when it is
	prior, lik evaluator   // prototypes (prior form)
	nOut       int         // length of the prior program's outputs
	order      []priorDraw // ancestral order (prior form)
}

// priorDraw draws one parameter from its prior.
type priorDraw struct {
	param int
	dist  sampler
	args  []operand // resolved distribution arguments
	off   []int     // offset of a node argument in the prior outputs, or −1
}

// support is the support of a prior distribution.
type support int

const (
	onReal         support = iota
	onPositive             // (0, ∞)
	onUnit                 // (0, 1)
	onArgs                 // (args[0], args[1]): Uniform
	onSimplex              // a Simplex parameter: Dirichlet
	onCorrCholesky         // a CholeskyFactorCorr parameter: LKJCholesky
)

// sampler is a prior distribution SamplePrior can draw from.
type sampler struct {
	name    string
	args    []Operand
	support support
	// check says why the resolved arguments do not fit parameter p ("" if
	// they do); draw fills x, p's constrained values, given the
	// arguments' values, using the caller's scratch (length maxArgs).
	check func(p *param, args []operand) string
	draw  func(rng *rand.Rand, args [][]float64, x, scratch []float64) error
}

// maxArgs is the most arguments a sampler takes.
const maxArgs = 3

// univariate is a sampler drawing each element of the parameter from
// draw with its own (broadcast) arguments.
type univariate struct {
	name    string
	args    []Operand
	support support
	draw    func(rng *rand.Rand, a []float64) float64
}

func (u univariate) sampler() sampler {
	return sampler{name: u.name, args: u.args, support: u.support,
		check: func(p *param, args []operand) string {
			for _, o := range args {
				if o.size() != 1 && o.size() != p.size() {
					return fmt.Sprintf("%s prior argument of %d values for %d", u.name, o.size(), p.size())
				}
			}
			return ""
		},
		draw: func(rng *rand.Rand, args [][]float64, x, scratch []float64) error {
			a := scratch[:len(args)]
			for i := range x {
				for j, v := range args {
					a[j] = boundAt(v, i)
				}
				x[i] = u.draw(rng, a)
			}
			return nil
		}}
}

// mvNormalSampler draws a vector parameter, or each row of a matrix one,
// from MvNormal: x = μ + Lz, z ~ N(0, I), with L the Cholesky factor of Σ.
func mvNormalSampler(d MvNormal) (sampler, bool) {
	if (d.Sigma == nil) == (d.L == nil) {
		return sampler{}, false
	}
	which, cov := "L", d.L
	if d.Sigma != nil {
		which, cov = "Sigma", d.Sigma
	}
	cols := func(p *param) int { return p.shape[len(p.shape)-1] }
	return sampler{name: "MvNormal", args: []Operand{d.Mu, cov}, support: onReal,
		check: func(p *param, args []operand) string {
			if len(p.shape) != 1 && len(p.shape) != 2 {
				return fmt.Sprintf("MvNormal prior on a parameter of shape %v", p.shape)
			}
			n := cols(p)
			if args[0].size() != 1 && args[0].size() != n || args[1].size() != n*n {
				return fmt.Sprintf("MvNormal prior arguments of %d and %d values for rows of %d", args[0].size(), args[1].size(), n)
			}
			return ""
		},
		draw: func(rng *rand.Rand, args [][]float64, x, _ []float64) error {
			n := len(args[1])
			n = int(math.Round(math.Sqrt(float64(n))))
			l, err := constFactor("MvNormal", which, args[1], n)
			if err != nil {
				return err
			}
			z := make([]float64, n)
			for r := 0; r < len(x); r += n {
				for i := range z {
					z[i] = rng.NormFloat64()
				}
				for i := range n {
					v := boundAt(args[0], i)
					for j := 0; j <= i; j++ {
						v += l.At(i, j) * z[j]
					}
					x[r+i] = v
				}
			}
			return nil
		}}, true
}

// samplerOf returns the sampler of d, if there is one.
func samplerOf(d Distribution) (sampler, bool) {
	switch d := d.(type) {
	case MvNormal:
		return mvNormalSampler(d)
	case Dirichlet:
		return dirichletSampler(d), true
	case LKJCholesky:
		return lkjSampler(d), true
	}
	u, ok := univariateOf(d)
	if !ok {
		return sampler{}, false
	}
	return u.sampler(), true
}

func univariateOf(d Distribution) (univariate, bool) {
	switch d := d.(type) {
	case Normal:
		return univariate{"Normal", []Operand{d.Mu, d.Sigma}, onReal, func(r *rand.Rand, a []float64) float64 {
			return distuv.Normal{Mu: a[0], Sigma: a[1], Src: r}.Rand()
		}}, true
	case HalfNormal:
		return univariate{"HalfNormal", []Operand{d.Sigma}, onPositive, func(r *rand.Rand, a []float64) float64 {
			return math.Abs(distuv.Normal{Mu: 0, Sigma: a[0], Src: r}.Rand())
		}}, true
	case LogNormal:
		return univariate{"LogNormal", []Operand{d.Mu, d.Sigma}, onPositive, func(r *rand.Rand, a []float64) float64 {
			return distuv.LogNormal{Mu: a[0], Sigma: a[1], Src: r}.Rand()
		}}, true
	case StudentT:
		return univariate{"StudentT", []Operand{d.Nu, d.Mu, d.Sigma}, onReal, func(r *rand.Rand, a []float64) float64 {
			return distuv.StudentsT{Nu: a[0], Mu: a[1], Sigma: a[2], Src: r}.Rand()
		}}, true
	case Cauchy:
		return univariate{"Cauchy", []Operand{d.Mu, d.Scale}, onReal, func(r *rand.Rand, a []float64) float64 {
			return distuv.StudentsT{Nu: 1, Mu: a[0], Sigma: a[1], Src: r}.Rand()
		}}, true
	case HalfCauchy:
		return univariate{"HalfCauchy", []Operand{d.Scale}, onPositive, func(r *rand.Rand, a []float64) float64 {
			return math.Abs(distuv.StudentsT{Nu: 1, Mu: 0, Sigma: a[0], Src: r}.Rand())
		}}, true
	case Exponential:
		return univariate{"Exponential", []Operand{d.Rate}, onPositive, func(r *rand.Rand, a []float64) float64 {
			return distuv.Exponential{Rate: a[0], Src: r}.Rand()
		}}, true
	case Gamma:
		return univariate{"Gamma", []Operand{d.Shape, d.Rate}, onPositive, func(r *rand.Rand, a []float64) float64 {
			return distuv.Gamma{Alpha: a[0], Beta: a[1], Src: r}.Rand()
		}}, true
	case InverseGamma:
		return univariate{"InverseGamma", []Operand{d.Shape, d.Scale}, onPositive, func(r *rand.Rand, a []float64) float64 {
			return distuv.InverseGamma{Alpha: a[0], Beta: a[1], Src: r}.Rand()
		}}, true
	case Beta:
		return univariate{"Beta", []Operand{d.Alpha, d.Beta}, onUnit, func(r *rand.Rand, a []float64) float64 {
			return distuv.Beta{Alpha: a[0], Beta: a[1], Src: r}.Rand()
		}}, true
	case Uniform:
		return univariate{"Uniform", []Operand{d.Min, d.Max}, onArgs, func(r *rand.Rand, a []float64) float64 {
			return distuv.Uniform{Min: a[0], Max: a[1], Src: r}.Rand()
		}}, true
	case Weibull:
		return univariate{"Weibull", []Operand{d.Alpha, d.Sigma}, onPositive, func(r *rand.Rand, a []float64) float64 {
			return distuv.Weibull{K: a[0], Lambda: a[1], Src: r}.Rand()
		}}, true
	case Laplace:
		return univariate{"Laplace", []Operand{d.Mu, d.Sigma}, onReal, func(r *rand.Rand, a []float64) float64 {
			return distuv.Laplace{Mu: a[0], Scale: a[1], Src: r}.Rand()
		}}, true
	case Logistic:
		// By inversion: gonum's Logistic (v0.17) ignores Mu and S.
		return univariate{"Logistic", []Operand{d.Mu, d.Sigma}, onReal, func(r *rand.Rand, a []float64) float64 {
			u := r.Float64()
			return a[0] + a[1]*(math.Log(u)-math.Log1p(-u))
		}}, true
	}
	return univariate{}, false
}

// Tempered returns the model's tempered form: the prior form when the
// priors allow it, else the reference form with q = N(0, I) (see
// TemperedModel). The first call compiles the prior and likelihood parts
// (later calls, on the model or its clones, share them); it must not run
// while the model's Builder is still in use.
func (m *GraphModel) Tempered() (*TemperedModel, error) {
	if m.shared.view != nil {
		return nil, fmt.Errorf("%w: Tempered", errMaskedView)
	}
	if m.offset != 0 {
		return nil, errors.New("ppl: a model with a selection space's log-density offset (WithModelOffset) has no tempered form")
	}
	plan, err := m.shared.temper.compile(m.shared)
	if err != nil {
		return nil, err
	}
	if !plan.fromPrior {
		return m.reference(plan, nil, nil)
	}
	return plan.newPriorForm(), nil
}

// TemperedReference returns the reference form of the tempered model with
// q = N(mean, diag(scale²)) on the unconstrained space, whatever the
// priors; nil mean means zeros and nil scale ones. A q close to the
// posterior (e.g. fitted to pilot draws) makes SMC's path shorter.
func (m *GraphModel) TemperedReference(mean, scale []float64) (*TemperedModel, error) {
	plan := &temperPlan{lay: m.shared, reason: "the reference form was asked for"}
	return m.reference(plan, mean, scale)
}

func (m *GraphModel) reference(plan *temperPlan, mean, scale []float64) (*TemperedModel, error) {
	n := m.shared.dim
	if mean == nil {
		mean = make([]float64, n)
	}
	if scale == nil {
		scale = make([]float64, n)
		for i := range scale {
			scale[i] = 1
		}
	}
	if len(mean) != n || len(scale) != n {
		return nil, fmt.Errorf("ppl: reference: mean and scale have lengths %d and %d, want %d", len(mean), len(scale), n)
	}
	for i := range mean {
		if math.IsNaN(mean[i]) || math.IsInf(mean[i], 0) || !(scale[i] > 0) || math.IsInf(scale[i], 1) {
			return nil, fmt.Errorf("ppl: reference: coordinate %d has mean %v and scale %v, want finite and positive", i, mean[i], scale[i])
		}
	}
	return &TemperedModel{plan: plan, model: m.clone(), mean: slices.Clone(mean), scale: slices.Clone(scale)}, nil
}

func (p *temperPlan) newPriorForm() *TemperedModel {
	return &TemperedModel{plan: p, prior: p.prior.clone(), lik: p.lik.clone(),
		w: make([]float64, p.lay.dim), outs: make([]float64, p.nOut)}
}

// Dim is the unconstrained dimension.
func (t *TemperedModel) Dim() int { return t.plan.lay.dim }

// FromPrior reports whether t is the prior form (SamplePrior draws from
// the model's own priors) rather than the reference form.
func (t *TemperedModel) FromPrior() bool { return t.model == nil }

// Reason says why t is in the reference form; it is empty for the prior
// form.
func (t *TemperedModel) Reason() string { return t.plan.reason }

// Clone returns an independent copy for another goroutine.
func (t *TemperedModel) Clone() *TemperedModel {
	if t.model != nil {
		return &TemperedModel{plan: t.plan, model: t.model.clone(), mean: t.mean, scale: t.scale}
	}
	return t.plan.newPriorForm()
}

// LogPriorLik returns the log prior and log likelihood at the
// unconstrained point x (their sum is the model's LogDensity) and, when
// gradPrior and gradLik are both non-nil, writes their gradients.
func (t *TemperedModel) LogPriorLik(x, gradPrior, gradLik []float64) (logPrior, logLik float64, err error) {
	n := t.plan.lay.dim
	withGrad := gradPrior != nil && gradLik != nil
	if len(x) != n || (withGrad && (len(gradPrior) != n || len(gradLik) != n)) {
		return 0, 0, fmt.Errorf("ppl: LogPriorLik: point and gradients have lengths %d, %d and %d, want %d", len(x), len(gradPrior), len(gradLik), n)
	}
	if t.model == nil {
		if !withGrad {
			if logPrior, err = t.prior.LogDensity(x); err != nil {
				return 0, 0, err
			}
			logLik, err = t.lik.LogDensity(x)
			return logPrior, logLik, err
		}
		if logPrior, err = t.prior.LogDensityGrad(x, gradPrior); err != nil {
			return 0, 0, err
		}
		logLik, err = t.lik.LogDensityGrad(x, gradLik)
		return logPrior, logLik, err
	}
	var lp float64
	if withGrad {
		lp, err = t.model.LogDensityGrad(x, gradLik)
	} else {
		lp, err = t.model.LogDensity(x)
	}
	if err != nil {
		return 0, 0, err
	}
	const logSqrt2Pi = 0.9189385332046727417803297364056176398613974736377834128171515404
	for i, xi := range x {
		z := (xi - t.mean[i]) / t.scale[i]
		logPrior -= 0.5*z*z + math.Log(t.scale[i]) + logSqrt2Pi
		if withGrad {
			g := -z / t.scale[i]
			gradPrior[i] = g
			gradLik[i] -= g
		}
	}
	return logPrior, lp - logPrior, nil
}

// SamplePrior draws x from the prior part: the model's priors, drawn
// ancestrally in the constrained space and then unconstrained, in the
// prior form, and q in the reference form.
func (t *TemperedModel) SamplePrior(rng *rand.Rand, x []float64) error {
	lay := t.plan.lay
	if len(x) != lay.dim {
		return fmt.Errorf("ppl: SamplePrior: x has length %d, want %d", len(x), lay.dim)
	}
	if rng == nil {
		return errors.New("ppl: SamplePrior: nil random source")
	}
	if t.model != nil {
		for i := range x {
			x[i] = t.mean[i] + t.scale[i]*rng.NormFloat64()
		}
		return nil
	}
	w := t.w
	clear(w)
	for _, d := range t.plan.order {
		if err := t.draw(rng, d, w); err != nil {
			return err
		}
	}
	copy(x, w)
	return nil
}

// draw draws parameter d.param given the coordinates of w it depends on,
// writing its unconstrained coordinates into w. A draw on the boundary of
// the support (a Beta draw of exactly 1, a Gamma draw that underflows) is
// drawn again.
func (t *TemperedModel) draw(rng *rand.Rand, d priorDraw, w []float64) error {
	lay := t.plan.lay
	p := lay.params[d.param]
	for _, off := range d.off {
		if off >= 0 {
			if err := t.prior.Outputs(w, t.outs); err != nil {
				return fmt.Errorf("ppl: SamplePrior: the prior arguments of %q: %w", p.name, err)
			}
			break
		}
	}
	n := p.size()
	t.xs = slices.Grow(t.xs[:0], n)[:n]
	t.args = t.args[:0]
	for j, a := range d.args {
		if d.off[j] >= 0 {
			t.args = append(t.args, t.outs[d.off[j]:d.off[j]+a.size()])
		} else {
			t.args = append(t.args, a.val)
		}
	}
	u := w[lay.uOff[d.param] : lay.uOff[d.param]+p.usize]
	const tries = 100
	var err error
	for try := 0; try < tries; try++ {
		if err = d.dist.draw(rng, t.args, t.xs, t.scratch[:]); err != nil {
			return fmt.Errorf("ppl: SamplePrior: %q from its %s prior: %w", p.name, d.dist.name, err)
		}
		if err = p.unconstrain(t.xs, p.lo.val, p.hi.val, u); err == nil {
			return nil
		}
	}
	return fmt.Errorf("ppl: SamplePrior: %d draws of %q from its %s prior failed: %w", tries, p.name, d.dist.name, err)
}

// compile analyses and compiles the tempered form once.
func (s *temperSource) compile(lay *modelLayout) (*temperPlan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.plan, s.err = s.build(lay)
		s.done = true
	}
	return s.plan, s.err
}

func (s *temperSource) build(lay *modelLayout) (*temperPlan, error) {
	plan := &temperPlan{lay: lay}
	owner := map[int64]int{} // unconstrained input node → parameter
	valueOf := map[*gorgonia.Node]int{}
	for i, p := range lay.params {
		for _, w := range p.wrt {
			owner[w.ID()] = i
		}
		valueOf[p.value] = i
	}
	dependsOn := func(roots ...*gorgonia.Node) []int {
		var deps []int
		for id := range reachable(s.g, roots) {
			if i, ok := owner[id]; ok && !slices.Contains(deps, i) {
				deps = append(deps, i)
			}
		}
		return deps
	}
	var priorTerms, likTerms []*gorgonia.Node
	draws := make([]*priorDraw, len(lay.params))
	deps := make([][]int, len(lay.params))
	for k, term := range s.terms {
		o := s.origins[k]
		if o.x == nil || len(dependsOn(o.x)) == 0 {
			likTerms = append(likTerms, term)
			continue
		}
		priorTerms = append(priorTerms, term)
		if plan.reason != "" {
			continue
		}
		i, ok := valueOf[o.x]
		if !ok {
			plan.reason = fmt.Sprintf("a Sample statement (%T) is on an expression of parameters, not on a declared parameter", o.dist)
			continue
		}
		if draws[i] != nil {
			plan.reason = fmt.Sprintf("parameter %q has two Sample statements", lay.params[i].name)
			continue
		}
		d, why := priorDrawOf(lay.params[i], o.dist)
		if why != "" {
			plan.reason = fmt.Sprintf("parameter %q: %s", lay.params[i].name, why)
			continue
		}
		d.param = i
		draws[i] = d
		var nodes []*gorgonia.Node
		for _, a := range d.args {
			if a.node != nil {
				nodes = append(nodes, a.node)
			}
		}
		if len(nodes) > 0 {
			deps[i] = dependsOn(nodes...)
		}
	}
	for i, p := range lay.params {
		if plan.reason == "" && draws[i] == nil {
			plan.reason = fmt.Sprintf("parameter %q has no prior (Sample statement on it)", p.name)
		}
		if p.logJ != nil {
			priorTerms = append(priorTerms, p.logJ)
		}
	}
	var order []int
	if plan.reason == "" {
		var ok bool
		if order, ok = topoOrder(deps); !ok {
			plan.reason = "the priors depend on each other in a cycle"
		}
	}
	if plan.reason != "" {
		return plan, nil
	}
	// The prior form: compile both parts.
	var outputs []*gorgonia.Node
	for _, i := range order {
		d := draws[i]
		d.off = make([]int, len(d.args))
		for j, a := range d.args {
			d.off[j] = -1
			if a.node != nil {
				d.off[j] = plan.nOut
				plan.nOut += nodeSize(a.node)
				outputs = append(outputs, a.node)
			}
		}
		plan.order = append(plan.order, *d)
	}
	var err error
	if plan.prior, err = s.compilePart("prior", priorTerms, 0, outputs); err != nil {
		return nil, err
	}
	if plan.lik, err = s.compilePart("likelihood", likTerms, s.offset, nil); err != nil {
		return nil, err
	}
	plan.fromPrior = true
	return plan, nil
}

func (s *temperSource) compilePart(what string, terms []*gorgonia.Node, offset float64, outputs []*gorgonia.Node) (evaluator, error) {
	out, err := sumTerms(s.g, terms, s.wrt, offset)
	if err != nil {
		return nil, fmt.Errorf("ppl: tempered form: %s part: %w", what, err)
	}
	if err := resetDerivatives(s.g); err != nil {
		return nil, err
	}
	ev, err := compile(s.g, out, s.wrt, outputs)
	if err != nil {
		return nil, fmt.Errorf("ppl: tempered form: %s part: %w", what, err)
	}
	return ev, nil
}

// priorDrawOf checks that p can be drawn from its prior d, or says why not.
func priorDrawOf(p *param, d Distribution) (*priorDraw, string) {
	u, ok := samplerOf(d)
	if !ok {
		return nil, fmt.Sprintf("no sampler for a %T prior", d)
	}
	dr := &priorDraw{dist: u}
	for _, a := range u.args {
		o, err := resolve(u.name, a)
		if err != nil {
			return nil, err.Error()
		}
		dr.args = append(dr.args, o)
	}
	if why := u.check(p, dr.args); why != "" {
		return nil, why
	}
	constBound := func(b operand, v float64) bool {
		if b.node != nil || len(b.val) == 0 {
			return false
		}
		for _, x := range b.val {
			if x != v {
				return false
			}
		}
		return true
	}
	fits := false
	switch u.support {
	case onReal:
		fits = p.kind == realLine
	case onPositive:
		fits = p.kind == lowerBounded && constBound(p.lo, 0)
	case onUnit:
		fits = p.kind == interval && constBound(p.lo, 0) && constBound(p.hi, 1)
	case onSimplex:
		fits = p.kind == simplex
	case onCorrCholesky:
		fits = p.kind == choleskyFactorCorr
	case onArgs:
		lo, hi := dr.args[0], dr.args[1]
		fits = p.kind == interval && p.lo.node == nil && p.hi.node == nil && lo.node == nil && hi.node == nil
		for i := 0; fits && i < p.size(); i++ {
			fits = boundAt(p.lo.val, i) == boundAt(lo.val, i) && boundAt(p.hi.val, i) == boundAt(hi.val, i)
		}
	}
	if !fits {
		return nil, fmt.Sprintf("its %s prior's support is not the %v parameter's", u.name, p.kind)
	}
	return dr, ""
}

// topoOrder orders the parameters so that each comes after those its prior
// depends on; ok is false on a cycle. Ties keep declaration order.
func topoOrder(deps [][]int) (order []int, ok bool) {
	state := make([]int, len(deps)) // 0 new, 1 visiting, 2 done
	var visit func(i int) bool
	visit = func(i int) bool {
		switch state[i] {
		case 1:
			return false
		case 2:
			return true
		}
		state[i] = 1
		for _, j := range deps[i] {
			if !visit(j) {
				return false
			}
		}
		state[i] = 2
		order = append(order, i)
		return true
	}
	for i := range deps {
		if !visit(i) {
			return nil, false
		}
	}
	return order, true
}

// derivField locates gorgonia.Node's unexported deriv field, the symbolic
// derivative that gorgonia.Grad caches in every node it differentiates.
var derivField = func() (uintptr, bool) {
	f, ok := reflect.TypeOf(gorgonia.Node{}).FieldByName("deriv")
	if !ok || f.Type != reflect.TypeOf((*gorgonia.Node)(nil)) {
		return 0, false
	}
	return f.Offset, true
}

// resetDerivatives forgets the derivatives cached in g's nodes by an
// earlier gorgonia.Grad. Grad reuses a node's cached derivative, which is
// the derivative of whatever output was differentiated first, so a second
// output of the same graph (the parts of a tempered model, or a model
// compiled twice from one Builder) would get wrong gradients. gorgonia
// v0.9.18 has no call for this, so the field is cleared through unsafe; the
// gradient tests of the tempered parts fail if gorgonia's layout changes.
func resetDerivatives(g *gorgonia.ExprGraph) error {
	off, ok := derivField()
	if !ok {
		return errors.New("ppl: internal: gorgonia.Node has no deriv field (gorgonia version changed?)")
	}
	for _, n := range g.AllNodes() {
		*(**gorgonia.Node)(unsafe.Add(unsafe.Pointer(n), off)) = nil
	}
	return nil
}

// dirichletSampler draws a Simplex parameter from Dirichlet: independent
// Gamma(α_k, 1) draws, normalised.
func dirichletSampler(d Dirichlet) sampler {
	return sampler{name: "Dirichlet", args: []Operand{d.Alpha}, support: onSimplex,
		check: func(p *param, args []operand) string {
			if args[0].size() != 1 && args[0].size() != p.size() {
				return fmt.Sprintf("Dirichlet prior argument of %d values for %d", args[0].size(), p.size())
			}
			return ""
		},
		draw: func(rng *rand.Rand, args [][]float64, x, _ []float64) error {
			s := 0.0
			for i := range x {
				x[i] = distuv.Gamma{Alpha: boundAt(args[0], i), Beta: 1, Src: rng}.Rand()
				s += x[i]
			}
			for i := range x {
				x[i] /= s // a sum that underflows to 0 gives NaNs, drawn again
			}
			return nil
		}}
}

// lkjSampler draws a CholeskyFactorCorr parameter from LKJCholesky. In the
// coordinates of the transform (see corr.go) the density factorises: the
// partial correlation z_il of row i, column l (from zero) has density
// ∝ (1 − z²)^{b−1} on (−1, 1), b = η + (K − l − 2)/2, so z = 2B − 1 with
// B ~ Beta(b, b), and the factor follows row by row.
func lkjSampler(d LKJCholesky) sampler {
	return sampler{name: "LKJCholesky", args: []Operand{d.Eta}, support: onCorrCholesky,
		check: func(p *param, args []operand) string {
			if args[0].size() != 1 {
				return fmt.Sprintf("LKJCholesky prior argument of %d values", args[0].size())
			}
			return ""
		},
		draw: func(rng *rand.Rand, args [][]float64, x, _ []float64) error {
			eta := args[0][0]
			k := int(math.Round(math.Sqrt(float64(len(x)))))
			clear(x)
			x[0] = 1
			for i := 1; i < k; i++ {
				rest := 1.0 // 1 − Σ_{l<j} L_il²
				for l := range i {
					b := eta + float64(k-l-2)/2
					z := 2*distuv.Beta{Alpha: b, Beta: b, Src: rng}.Rand() - 1
					v := z * math.Sqrt(rest)
					x[i*k+l] = v
					rest -= v * v
				}
				x[i*k+i] = math.Sqrt(rest)
			}
			return nil
		}}
}
