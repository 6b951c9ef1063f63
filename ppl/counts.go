package ppl

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
)

// Count distributions on the natural scale. Their observations are data,
// so that log x!, log C(n, x) and the masks below are folded into
// constants; constant parameters are checked against their domain when
// the graph is built, so that a bad value is an error naming it rather
// than a NaN at run time.

// checkParam returns an error naming the first value of a constant
// parameter outside its domain (ok false), with want saying the domain.
// Node parameters are not checked: keep them in their domain by their
// constraints.
func checkParam(dist, name string, o operand, ok func(float64) bool, want string) error {
	if !o.isConst() {
		return nil
	}
	for i, v := range o.val {
		if !ok(v) {
			at := ""
			if len(o.val) > 1 {
				at = fmt.Sprintf("[%d]", i)
			}
			return fmt.Errorf("ppl: %s: %s%s is %v, want %s", dist, name, at, v, want)
		}
	}
	return nil
}

func positive(v float64) bool    { return v > 0 }
func nonNegative(v float64) bool { return v >= 0 }
func probability(v float64) bool { return v >= 0 && v <= 1 }

// finiteResult is e.result(o), or an error when o is a constant (no
// parameter appears in it) holding a non-finite log-density: data
// impossible under constant parameters, such as a success under P = 0.
func (e *expr) finiteResult(dist string, o operand) (*gorgonia.Node, error) {
	n, err := e.result(o)
	if err != nil {
		return nil, err
	}
	if v, ok := constValues(n); ok {
		for i, x := range v {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				continue
			}
			what := "the log-density"
			if len(v) > 1 {
				what = fmt.Sprintf("the log-density of observation %d", i)
			}
			return nil, fmt.Errorf("ppl: %s: %s is %v under the given constant parameters: an observation impossible under them", dist, what, x)
		}
	}
	return n, nil
}

// lchoose returns log C(n, k).
func lchoose(n, k float64) float64 {
	a, _ := math.Lgamma(n + 1)
	b, _ := math.Lgamma(k + 1)
	c, _ := math.Lgamma(n - k + 1)
	return a - b - c
}

// zeroMask returns the constant operand that is one where the constant a
// is zero and zero elsewhere, and whether a has a zero at all.
func zeroMask(a operand) (operand, bool) {
	found := false
	m := mapConst(a, func(x float64) float64 {
		if x == 0 {
			found = true
			return 1
		}
		return 0
	})
	return m, found
}

// xlogy returns a·log y with 0·log 0 = 0 for a constant a (counts). Where
// a is zero, log(y + 1) is taken instead, which a multiplies away, so a
// zero count meeting a zero probability gives no NaN in the value or the
// gradient.
func (e *expr) xlogy(a, y operand) operand {
	if !a.isConst() {
		return e.Mul(a, e.Log(y))
	}
	if y.isConst() {
		return e.o2(a, y, func(a, y float64) float64 {
			if a == 0 {
				return 0
			}
			return a * math.Log(y)
		}, nil)
	}
	if m, ok := zeroMask(a); ok {
		y = e.Add(y, m)
	}
	return e.Mul(a, e.Log(y))
}

// xlog1my returns a·log(1 − y) with 0·log 0 = 0, as xlogy.
func (e *expr) xlog1my(a, y operand) operand {
	if !a.isConst() {
		return e.Mul(a, e.Log1p(e.Neg(y)))
	}
	if y.isConst() {
		return e.o2(a, y, func(a, y float64) float64 {
			if a == 0 {
				return 0
			}
			return a * math.Log1p(-y)
		}, nil)
	}
	ny := e.Neg(y)
	if m, ok := zeroMask(a); ok {
		ny = e.Add(ny, m)
	}
	return e.Mul(a, e.Log1p(ny))
}

// countOperands resolves the observation (data counts, checked against the
// trials n when trials names a parameter) and the parameters.
func countOperands(dist string, x *gorgonia.Node, trials string, names []string, vals []Operand) ([]operand, error) {
	o, v, err := dataOperands(dist, x, names, vals...)
	if err != nil {
		return nil, err
	}
	var hi []float64
	if trials != "" {
		n := o[1]
		if !n.isConst() {
			return nil, fmt.Errorf("ppl: %s: %s must be a constant (int, float64, []float64 or data)", dist, trials)
		}
		if err := checkCounts(dist, n.val, nil); err != nil {
			return nil, fmt.Errorf("%w (%s)", err, trials)
		}
		hi = n.val
	}
	if err := checkCounts(dist, v, hi); err != nil {
		return nil, err
	}
	o[0] = operand{val: v, shape: o[0].shape}
	return o, nil
}

// lfactorial returns the constant log x! of each count.
func lfactorial(x operand) operand {
	return mapConst(x, func(k float64) float64 { l, _ := math.Lgamma(k + 1); return l })
}

// Binomial is the binomial distribution with N trials (a constant) and
// success probability P in [0, 1] (Stan's binomial; BinomialLogit takes
// the log-odds).
type Binomial struct{ N, P Operand }

// LogProb returns the summed log-probability of x.
func (d Binomial) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns log C(N, x) + x·log P + (N − x)·log(1 − P) for each
// element of x.
func (d Binomial) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	const dist = "Binomial"
	o, err := countOperands(dist, x, "N", []string{"N", "P"}, []Operand{d.N, d.P})
	if err != nil {
		return nil, err
	}
	if err := checkParam(dist, "P", o[2], probability, "a probability in [0, 1]"); err != nil {
		return nil, err
	}
	e := &expr{}
	lc := e.o2(o[1], o[0], lchoose, nil)
	fail := e.o2(o[1], o[0], func(n, k float64) float64 { return n - k }, nil)
	lp := e.Add(e.Add(lc, e.xlogy(o[0], o[2])), e.xlog1my(fail, o[2]))
	return e.finiteResult(dist, lp)
}

// Poisson is the Poisson distribution with rate Rate ≥ 0 (Stan's poisson;
// PoissonLog takes the log-rate).
type Poisson struct{ Rate Operand }

// LogProb returns the summed log-probability of x.
func (d Poisson) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns x·log λ − λ − log x! for each element of x.
func (d Poisson) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	const dist = "Poisson"
	o, err := countOperands(dist, x, "", []string{"Rate"}, []Operand{d.Rate})
	if err != nil {
		return nil, err
	}
	if err := checkParam(dist, "Rate", o[1], nonNegative, "≥ 0"); err != nil {
		return nil, err
	}
	e := &expr{}
	lp := e.Sub(e.Sub(e.xlogy(o[0], o[1]), o[1]), lfactorial(o[0]))
	return e.finiteResult(dist, lp)
}

// BernoulliProb is the Bernoulli distribution on {0, 1} with success
// probability P in [0, 1] (Stan's bernoulli; BernoulliLogit takes the
// log-odds). It is not named Bernoulli, which is the model prior of a
// SelectionSpace.
type BernoulliProb struct{ P Operand }

// LogProb returns the summed log-probability of x.
func (d BernoulliProb) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return total(d.LogProbs(x))
}

// LogProbs returns log P for each one in x and log(1 − P) for each zero.
func (d BernoulliProb) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	const dist = "BernoulliProb"
	o, err := countOperands(dist, x, "", []string{"P"}, []Operand{d.P})
	if err != nil {
		return nil, err
	}
	for i, xi := range o[0].val {
		if xi > 1 {
			return nil, fmt.Errorf("ppl: %s: observation %d is %v, want 0 or 1", dist, i, xi)
		}
	}
	if err := checkParam(dist, "P", o[1], probability, "a probability in [0, 1]"); err != nil {
		return nil, err
	}
	// log(c + s·P) with c = 1 − x and s = 2x − 1 is log P or log(1 − P):
	// one log, finite at P = 1 for a one and at P = 0 for a zero.
	e := &expr{}
	c := mapConst(o[0], func(x float64) float64 { return 1 - x })
	s := mapConst(o[0], func(x float64) float64 { return 2*x - 1 })
	return e.finiteResult(dist, e.Log(e.Add(c, e.Mul(s, o[1]))))
}

// NegBinomial2 is the negative binomial distribution with mean Mu > 0 and
// overdispersion Phi > 0, variance μ + μ²/φ (Stan's neg_binomial_2):
// p(x) = C(x + φ − 1, x) (μ/(μ+φ))ˣ (φ/(μ+φ))^φ.
type NegBinomial2 struct{ Mu, Phi Operand }

// LogProb returns the summed log-probability of x.
func (d NegBinomial2) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return total(d.LogProbs(x))
}

// LogProbs returns the log-probability of each element of x.
func (d NegBinomial2) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	const dist = "NegBinomial2"
	o, err := countOperands(dist, x, "", []string{"Mu", "Phi"}, []Operand{d.Mu, d.Phi})
	if err != nil {
		return nil, err
	}
	if err := checkParam(dist, "Mu", o[1], positive, "> 0"); err != nil {
		return nil, err
	}
	if err := checkParam(dist, "Phi", o[2], positive, "> 0"); err != nil {
		return nil, err
	}
	e := &expr{}
	x0, mu, phi := o[0], o[1], o[2]
	// φ·log(φ/(μ+φ)) = −φ·log1p(μ/φ), exact when μ ≪ φ.
	kern := e.Sub(e.Sub(e.xlogy(x0, mu), e.Mul(x0, e.Log(e.Add(mu, phi)))), e.Mul(phi, e.Log1p(e.Div(mu, phi))))
	return e.finiteResult(dist, e.Add(kern, e.negBinomialNorm(x0, phi)))
}

// negBinomialNorm is log Γ(x + φ) − log Γ(φ) − log x!.
func (e *expr) negBinomialNorm(x, phi operand) operand {
	return e.Sub(e.Sub(e.Lgamma(e.Add(x, phi)), e.Lgamma(phi)), lfactorial(x))
}

// NegBinomial2Log is NegBinomial2 with log-mean LogMu (Stan's
// neg_binomial_2_log), the form of a regression with a log link.
type NegBinomial2Log struct{ LogMu, Phi Operand }

// LogProb returns the summed log-probability of x.
func (d NegBinomial2Log) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return total(d.LogProbs(x))
}

// LogProbs returns the log-probability of each element of x.
func (d NegBinomial2Log) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	const dist = "NegBinomial2Log"
	o, err := countOperands(dist, x, "", []string{"LogMu", "Phi"}, []Operand{d.LogMu, d.Phi})
	if err != nil {
		return nil, err
	}
	if err := checkParam(dist, "Phi", o[2], positive, "> 0"); err != nil {
		return nil, err
	}
	e := &expr{}
	x0, eta, phi := o[0], o[1], o[2]
	// With r = η − log φ: x·log(μ/(μ+φ)) + φ·log(φ/(μ+φ)) = x·r − (x+φ)·softplus(r),
	// finite for any η.
	r := e.Sub(eta, e.Log(phi))
	kern := e.Sub(e.Mul(x0, r), e.Mul(e.Add(x0, phi), e.Softplus(r)))
	return e.finiteResult(dist, e.Add(kern, e.negBinomialNorm(x0, phi)))
}

// NegBinomial is the negative binomial distribution with shape Alpha > 0
// and inverse scale Beta > 0, mean α/β (Stan's neg_binomial):
// p(x) = C(x + α − 1, x) (β/(1+β))^α (1/(1+β))ˣ.
type NegBinomial struct{ Alpha, Beta Operand }

// LogProb returns the summed log-probability of x.
func (d NegBinomial) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return total(d.LogProbs(x))
}

// LogProbs returns the log-probability of each element of x.
func (d NegBinomial) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	const dist = "NegBinomial"
	o, err := countOperands(dist, x, "", []string{"Alpha", "Beta"}, []Operand{d.Alpha, d.Beta})
	if err != nil {
		return nil, err
	}
	if err := checkParam(dist, "Alpha", o[1], positive, "> 0"); err != nil {
		return nil, err
	}
	if err := checkParam(dist, "Beta", o[2], positive, "> 0"); err != nil {
		return nil, err
	}
	e := &expr{}
	x0, a, b := o[0], o[1], o[2]
	kern := e.Sub(e.Mul(a, e.Log(b)), e.Mul(e.Add(x0, a), e.Log1p(b)))
	return e.finiteResult(dist, e.Add(kern, e.negBinomialNorm(x0, a)))
}

// BetaBinomialCounts is the beta-binomial distribution of counts out of N
// trials (a constant) with prior shapes Alpha > 0 and Beta > 0 (Stan's
// beta_binomial): p(x) = C(N, x) B(x + α, N − x + β) / B(α, β). It is not
// named BetaBinomial, which is the model prior of a SelectionSpace.
type BetaBinomialCounts struct{ N, Alpha, Beta Operand }

// LogProb returns the summed log-probability of x.
func (d BetaBinomialCounts) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return total(d.LogProbs(x))
}

// LogProbs returns the log-probability of each element of x.
func (d BetaBinomialCounts) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	const dist = "BetaBinomialCounts"
	o, err := countOperands(dist, x, "N", []string{"N", "Alpha", "Beta"}, []Operand{d.N, d.Alpha, d.Beta})
	if err != nil {
		return nil, err
	}
	if err := checkParam(dist, "Alpha", o[2], positive, "> 0"); err != nil {
		return nil, err
	}
	if err := checkParam(dist, "Beta", o[3], positive, "> 0"); err != nil {
		return nil, err
	}
	e := &expr{}
	x0, n, a, b := o[0], o[1], o[2], o[3]
	fail := e.Sub(n, x0)
	lc := e.o2(n, x0, lchoose, nil)
	// log B(x+α, N−x+β) − log B(α, β)
	num := e.Sub(e.Add(e.Lgamma(e.Add(x0, a)), e.Lgamma(e.Add(fail, b))), e.Lgamma(e.Add(n, e.Add(a, b))))
	den := e.Sub(e.Add(e.Lgamma(a), e.Lgamma(b)), e.Lgamma(e.Add(a, b)))
	return e.finiteResult(dist, e.Add(lc, e.Sub(num, den)))
}
