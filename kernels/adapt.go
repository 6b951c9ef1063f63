package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// DualAveraging is Nesterov's dual-averaging scheme for the step size as
// Hoffman & Gelman (2014) and Stan use it: it drives a statistic in [0, 1]
// (the acceptance statistic) to Delta by moving log ε.
type DualAveraging struct {
	// Delta is the target acceptance statistic, Gamma the regularization
	// scale, T0 the iteration offset that damps early iterations and Kappa
	// the decay exponent of the averaging weights.
	Delta, Gamma, T0, Kappa float64

	mu, sBar, xBar, counter float64
}

// NewDualAveraging returns dual averaging with Stan's defaults
// (δ = delta, γ = 0.05, t0 = 10, κ = 0.75), restarted at step size eps.
func NewDualAveraging(delta, eps float64) *DualAveraging {
	d := &DualAveraging{Delta: delta, Gamma: 0.05, T0: 10, Kappa: 0.75}
	d.Restart(eps)
	return d
}

// Restart forgets the history and shrinks toward log(10·eps), which favours
// step sizes larger than the heuristic's so that the search is not stuck.
func (d *DualAveraging) Restart(eps float64) {
	d.mu = math.Log(10 * eps)
	d.sBar, d.xBar, d.counter = 0, 0, 0
}

// Update records one acceptance statistic and returns the next step size.
func (d *DualAveraging) Update(stat float64) float64 {
	if math.IsNaN(stat) {
		stat = 0
	}
	stat = math.Min(1, stat)
	d.counter++
	eta := 1 / (d.counter + d.T0)
	d.sBar = (1-eta)*d.sBar + eta*(d.Delta-stat)
	x := d.mu - d.sBar*math.Sqrt(d.counter)/d.Gamma
	w := math.Pow(d.counter, -d.Kappa)
	d.xBar = (1-w)*d.xBar + w*x
	return math.Exp(x)
}

// Final returns the averaged step size exp(x̄), used after warm-up.
func (d *DualAveraging) Final() float64 { return math.Exp(d.xBar) }

// windows is Stan's warm-up schedule: an initial fast buffer, slow windows
// doubling in length from the base window during which the metric is
// estimated, and a terminal fast buffer.
type windows struct {
	warmup int
	// ends[i] is the exclusive end of the i-th slow window; start the
	// first slow iteration.
	start int
	ends  []int
}

// newWindows builds the schedule; with fewer than 20 warm-up iterations no
// metric is estimated, as in Stan.
func newWindows(warmup, initBuf, termBuf, baseWin int) windows {
	w := windows{warmup: warmup}
	if warmup < 20 {
		return w
	}
	if initBuf+termBuf+baseWin > warmup {
		initBuf = int(0.15 * float64(warmup))
		termBuf = int(0.1 * float64(warmup))
		baseWin = warmup - initBuf - termBuf
	}
	w.start = initBuf
	last := warmup - termBuf
	start, size := initBuf, baseWin
	for start < last {
		end := start + size
		// A window is stretched to the terminal buffer when the next,
		// twice as long, would not fit.
		// (Written so that it cannot overflow for any warm-up length.)
		if size > (last-end)/2 {
			end = last
		}
		w.ends = append(w.ends, end)
		start, size = end, 2*size
	}
	return w
}

// slow reports whether warm-up iteration i (0-based) feeds the metric
// estimate, and end whether it closes a slow window.
func (w windows) slow(i int) (slow, end bool) {
	if len(w.ends) == 0 || i < w.start || i >= w.ends[len(w.ends)-1] {
		return false, false
	}
	for _, e := range w.ends {
		if i == e-1 {
			return true, true
		}
	}
	return true, false
}

// welford accumulates the mean and (co)variance of draws.
type welford struct {
	n    int
	mean []float64
	m2   []float64 // diagonal sums, or dense row-major sums
	dens bool
	dx   []float64
}

func newWelford(dim int, dense bool) *welford {
	w := &welford{mean: make([]float64, dim), dx: make([]float64, dim), dens: dense}
	if dense {
		w.m2 = make([]float64, dim*dim)
	} else {
		w.m2 = make([]float64, dim)
	}
	return w
}

func (w *welford) reset() {
	w.n = 0
	clear(w.mean)
	clear(w.m2)
}

func (w *welford) add(x []float64) {
	w.n++
	n := len(x)
	for i, xi := range x {
		w.dx[i] = xi - w.mean[i]
		w.mean[i] += w.dx[i] / float64(w.n)
	}
	for i, xi := range x {
		if w.dens {
			for j := 0; j < n; j++ {
				w.m2[i*n+j] += w.dx[i] * (x[j] - w.mean[j])
			}
		} else {
			w.m2[i] += w.dx[i] * (xi - w.mean[i])
		}
	}
}

// regularized returns the sample (co)variance shrunk toward 1e-3·I with
// Stan's weights n/(n+5) and 5/(n+5), so that short windows stay well
// conditioned.
func (w *welford) regularized() []float64 {
	nf := float64(w.n)
	out := make([]float64, len(w.m2))
	a, b := nf/(nf+5), 1e-3*5/(nf+5)
	dim := len(w.mean)
	for i := range out {
		out[i] = a * w.m2[i] / (nf - 1)
	}
	if w.dens {
		for i := 0; i < dim; i++ {
			out[i*dim+i] += b
		}
	} else {
		for i := range out {
			out[i] += b
		}
	}
	return out
}

func (w *welford) metric() (*Metric, error) {
	v := w.regularized()
	if !w.dens {
		return NewDiagMetric(v)
	}
	n := len(w.mean)
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, 0.5*(v[i*n+j]+v[j*n+i]))
		}
	}
	return NewDenseMetric(s)
}

// NUTSAdaptConfig sets Stan's warm-up for NUTS. Zero fields take Stan's
// defaults.
type NUTSAdaptConfig struct {
	// TargetAccept is δ, the target acceptance statistic (0.8).
	TargetAccept float64
	// Gamma, T0 and Kappa are the dual-averaging constants (0.05, 10, 0.75).
	Gamma, T0, Kappa float64
	// InitBuffer, BaseWindow and TermBuffer are the lengths of the
	// initial fast buffer (75), first slow window (25) and terminal fast
	// buffer (50).
	InitBuffer, BaseWindow, TermBuffer int
	// Metric is the kind of metric to adapt: DiagMetric (default),
	// DenseMetric, or UnitMetric for step size only.
	Metric MetricKind
}

func (c NUTSAdaptConfig) withDefaults() NUTSAdaptConfig {
	setDefault(&c.TargetAccept, 0.8)
	setDefault(&c.Gamma, 0.05)
	setDefault(&c.T0, 10)
	setDefault(&c.Kappa, 0.75)
	setDefault(&c.InitBuffer, 75)
	setDefault(&c.BaseWindow, 25)
	setDefault(&c.TermBuffer, 50)
	return c
}

// NUTSAdaptation runs Stan's windowed warm-up on a NUTS kernel: dual
// averaging of the step size throughout, and estimation of the metric over
// slow windows, after each of which the step-size search restarts. Call
// Step once per warm-up iteration, then Finish.
type NUTSAdaptation struct {
	kernel *NUTS
	cfg    NUTSAdaptConfig
	da     *DualAveraging
	win    windows
	acc    *welford
	iter   int
	// GradEvals counts gradient evaluations, including those of the
	// step-size searches.
	GradEvals int
}

// NewNUTSAdaptation prepares numWarmup iterations of adaptation for k. When
// a metric is to be estimated (numWarmup ≥ 20) and the kernel's metric is
// not of cfg's kind, it is converted to that kind (its diagonal, or a
// dense copy) as the starting point.
func NewNUTSAdaptation(k *NUTS, numWarmup int, cfg NUTSAdaptConfig) (*NUTSAdaptation, error) {
	if k == nil {
		return nil, fmt.Errorf("kernels: nil NUTS kernel")
	}
	cfg = cfg.withDefaults()
	if numWarmup < 0 {
		return nil, fmt.Errorf("kernels: %d warm-up iterations", numWarmup)
	}
	if !(cfg.TargetAccept > 0 && cfg.TargetAccept < 1) {
		return nil, fmt.Errorf("kernels: target acceptance %v, want in (0, 1)", cfg.TargetAccept)
	}
	switch cfg.Metric {
	case DiagMetric, DenseMetric, UnitMetric:
	default:
		return nil, fmt.Errorf("kernels: unknown metric kind %v", cfg.Metric)
	}
	a := &NUTSAdaptation{kernel: k, cfg: cfg}
	a.da = &DualAveraging{Delta: cfg.TargetAccept, Gamma: cfg.Gamma, T0: cfg.T0, Kappa: cfg.Kappa}
	if numWarmup >= 20 && k.Metric.Kind() != cfg.Metric && cfg.Metric != UnitMetric {
		if cfg.Metric == DiagMetric {
			k.Metric, _ = NewDiagMetric(k.Metric.InvMassDiag())
		} else {
			k.Metric, _ = NewDenseMetric(k.Metric.InvMass())
		}
	}
	if cfg.Metric != UnitMetric {
		a.win = newWindows(numWarmup, cfg.InitBuffer, cfg.TermBuffer, cfg.BaseWindow)
		a.acc = newWelford(k.dim, cfg.Metric == DenseMetric)
	}
	return a, nil
}

// Step runs warm-up iteration: a NUTS transition at the current step size
// followed by the adaptation updates. The first call searches for an
// initial step size from s. An error means the step-size search failed.
func (a *NUTSAdaptation) Step(rng *rand.Rand, s NUTSState) (NUTSState, NUTSInfo, error) {
	k := a.kernel
	if err := k.Validate(); err != nil {
		return s, NUTSInfo{}, err
	}
	if a.iter == 0 {
		n, err := k.findStepSize(rng, s)
		a.GradEvals += n
		if err != nil {
			return s, NUTSInfo{}, err
		}
		a.da.Restart(k.StepSize)
	}
	s, info := k.Step(rng, s)
	a.GradEvals += info.NumLeapfrog
	k.StepSize = a.da.Update(info.AcceptProb)
	m, err := windowEstimate(a.win, a.acc, a.iter, s.Position, "metric")
	if err != nil {
		return s, info, err
	}
	if m != nil {
		k.Metric = m
		a.acc.reset()
		n, err := k.findStepSize(rng, s)
		a.GradEvals += n
		if err != nil {
			return s, info, err
		}
		a.da.Restart(k.StepSize)
	}
	a.iter++
	return s, info, nil
}

// windowEstimate adds x, the position after warm-up iteration iter, to acc
// in a slow window of win, and at the end of the window returns acc's
// estimate (what names it in an error); otherwise it returns nil.
func windowEstimate(win windows, acc *welford, iter int, x []float64, what string) (*Metric, error) {
	slow, end := win.slow(iter)
	if !slow {
		return nil, nil
	}
	acc.add(x)
	if !end {
		return nil, nil
	}
	m, err := acc.metric()
	if err != nil {
		return nil, fmt.Errorf("kernels: %s estimate at warm-up iteration %d: %w", what, iter, err)
	}
	return m, nil
}

// Finish sets the kernel's step size to the dual-averaging average; call it
// after the last warm-up iteration.
func (a *NUTSAdaptation) Finish() {
	if a.iter > 0 {
		a.kernel.StepSize = a.da.Final()
	}
}
