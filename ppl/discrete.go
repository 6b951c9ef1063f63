package ppl

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
)

// dataOperands is operands for an observation that must be data, whose
// values it returns too (see observed).
func dataOperands(dist string, x *gorgonia.Node, names []string, vals ...Operand) ([]operand, []float64, error) {
	o, err := operands(dist, x, names, vals...)
	if err != nil {
		return nil, nil, err
	}
	v, err := observed(dist, x)
	return o, v, err
}

// observed returns the values of an observation node, which must hold data
// (a Builder.Data node or a constant): the discrete distributions fold
// terms such as log x! into constants.
func observed(dist string, x *gorgonia.Node) ([]float64, error) {
	if x == nil {
		return nil, fmt.Errorf("ppl: %s: nil observation", dist)
	}
	v := x.Value()
	if v == nil || x.Op() != nil && !isConstantOp(x) {
		return nil, fmt.Errorf("ppl: %s: the observation must be data (Builder.Data or a constant), not a computed node", dist)
	}
	switch d := v.Data().(type) {
	case float64:
		return []float64{d}, nil
	case []float64:
		return d, nil
	}
	return nil, fmt.Errorf("ppl: %s: observation has dtype %v, want float64", dist, x.Dtype())
}

// isConstantOp reports whether n is a gorgonia constant (its op type is
// unexported, so it is recognised by name).
func isConstantOp(n *gorgonia.Node) bool {
	t := fmt.Sprintf("%T", n.Op())
	return t == "gorgonia.constantScalar" || t == "gorgonia.constantTensor" || t == "*gorgonia.constantScalar" || t == "*gorgonia.constantTensor"
}

func checkCounts(dist string, v []float64, hi []float64) error {
	for i, x := range v {
		if x < 0 || x != math.Trunc(x) {
			return fmt.Errorf("ppl: %s: observation %d is %v, want a non-negative integer", dist, i, x)
		}
		if hi != nil && x > boundAt(hi, i) {
			return fmt.Errorf("ppl: %s: observation %d is %v, above its %v trials", dist, i, x, boundAt(hi, i))
		}
	}
	return nil
}

// BernoulliLogit is the Bernoulli distribution on {0, 1} with success
// probability logistic(Logit).
type BernoulliLogit struct{ Logit Operand }

// LogProb returns the summed log-probability of x.
func (d BernoulliLogit) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return total(d.LogProbs(x))
}

// LogProbs returns x·η − log(1 + exp η) for each element of x.
func (d BernoulliLogit) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	o, v, err := dataOperands("BernoulliLogit", x, []string{"Logit"}, d.Logit)
	if err != nil {
		return nil, err
	}
	for i, xi := range v {
		if xi != 0 && xi != 1 {
			return nil, fmt.Errorf("ppl: BernoulliLogit: observation %d is %v, want 0 or 1", i, xi)
		}
	}
	e := &expr{}
	return e.result(e.Sub(e.Mul(o[0], o[1]), e.Softplus(o[1])))
}

// BinomialLogit is the binomial distribution with N trials (a constant) and
// success probability logistic(Logit).
type BinomialLogit struct{ N, Logit Operand }

// LogProb returns the summed log-probability of x.
func (d BinomialLogit) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return total(d.LogProbs(x))
}

// LogProbs returns log C(N, x) + x·η − N·log(1 + exp η) for each element.
func (d BinomialLogit) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	o, err := operands("BinomialLogit", x, []string{"N", "Logit"}, d.N, d.Logit)
	if err != nil {
		return nil, err
	}
	if !o[1].isConst() {
		return nil, fmt.Errorf("ppl: BinomialLogit: N must be a constant (int, float64 or []float64)")
	}
	v, err := observed("BinomialLogit", x)
	if err != nil {
		return nil, err
	}
	if err := checkCounts("BinomialLogit", o[1].val, nil); err != nil {
		return nil, fmt.Errorf("%w (N)", err)
	}
	if err := checkCounts("BinomialLogit", v, o[1].val); err != nil {
		return nil, err
	}
	lc := make([]float64, len(v))
	for i, k := range v {
		n := boundAt(o[1].val, i)
		a, _ := math.Lgamma(n + 1)
		b, _ := math.Lgamma(k + 1)
		c, _ := math.Lgamma(n - k + 1)
		lc[i] = a - b - c
	}
	e := &expr{}
	lp := e.Sub(e.Mul(o[0], o[2]), e.Mul(o[1], e.Softplus(o[2])))
	return e.result(e.Add(lp, operand{val: lc, shape: o[0].shape}))
}

// PoissonLog is the Poisson distribution with rate exp(LogRate).
type PoissonLog struct{ LogRate Operand }

// LogProb returns the summed log-probability of x.
func (d PoissonLog) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns x·η − exp η − log x! for each element of x.
func (d PoissonLog) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	o, v, err := dataOperands("PoissonLog", x, []string{"LogRate"}, d.LogRate)
	if err != nil {
		return nil, err
	}
	if err := checkCounts("PoissonLog", v, nil); err != nil {
		return nil, err
	}
	lf := make([]float64, len(v))
	for i, k := range v {
		lf[i], _ = math.Lgamma(k + 1)
	}
	e := &expr{}
	lp := e.Sub(e.Mul(o[0], o[1]), e.Exp(o[1]))
	return e.result(e.Sub(lp, operand{val: lf, shape: o[0].shape}))
}
