package ppl

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/internal/scalar"
)

// domain is the set of valid values of a distribution's parameter or
// observation, checked where they are constants; a nil ok admits any
// finite value.
type domain struct {
	ok   func(float64) bool
	want string
}

var (
	anyReal   = domain{}
	positiveD = domain{positive, "> 0"}
	nonNegD   = domain{nonNegative, "≥ 0"}
)

// checkedLogProbs is logProbs with the constant observations checked
// against support and each constant parameter against its domain, and a
// constant non-finite result reported as an error.
func checkedLogProbs(dist string, x *gorgonia.Node, support domain, names []string, vals []Operand, doms []domain, density func(e *expr, o []operand) operand) (*gorgonia.Node, error) {
	o, err := operands(dist, x, names, vals...)
	if err != nil {
		return nil, err
	}
	if support.ok != nil && o[0].isConst() {
		for i, v := range o[0].val {
			if !support.ok(v) {
				return nil, fmt.Errorf("ppl: %s: observation %d is %v, want %s", dist, i, v, support.want)
			}
		}
	}
	for i, d := range doms {
		if d.ok == nil {
			continue
		}
		if err := checkParam(dist, names[i], o[i+1], d.ok, d.want); err != nil {
			return nil, err
		}
	}
	e := &expr{}
	return e.finiteResult(dist, density(e, o))
}

// Weibull is the Weibull distribution with shape Alpha and scale Sigma
// (Stan's weibull), density (α/σ)(x/σ)^{α−1} exp(−(x/σ)^α) for x > 0.
type Weibull struct{ Alpha, Sigma Operand }

// LogProb returns the summed log-density of x.
func (d Weibull) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d Weibull) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return checkedLogProbs("Weibull", x, positiveD, []string{"Alpha", "Sigma"}, []Operand{d.Alpha, d.Sigma}, []domain{positiveD, positiveD}, func(e *expr, o []operand) operand {
		a, ls := o[1], e.Log(o[2])
		z := e.Sub(e.Log(o[0]), ls) // log(x/σ)
		return e.Sub(e.Add(e.Sub(e.Log(a), ls), e.Mul(e.Sub(a, cst(1)), z)), e.Exp(e.Mul(a, z)))
	})
}

// Laplace is the Laplace (double exponential) distribution with location
// Mu and scale Sigma (Stan's double_exponential), density
// exp(−|x − μ|/σ) / 2σ.
type Laplace struct{ Mu, Sigma Operand }

// LogProb returns the summed log-density of x.
func (d Laplace) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d Laplace) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return checkedLogProbs("Laplace", x, anyReal, []string{"Mu", "Sigma"}, []Operand{d.Mu, d.Sigma}, []domain{anyReal, positiveD}, func(e *expr, o []operand) operand {
		z := e.Div(e.Abs(e.Sub(o[0], o[1])), o[2])
		return e.Neg(e.Add(e.Add(z, e.Log(o[2])), cst(math.Ln2)))
	})
}

// Logistic is the logistic distribution with location Mu and scale Sigma
// (Stan's logistic), density e^{−z} / σ(1 + e^{−z})² with z = (x − μ)/σ.
type Logistic struct{ Mu, Sigma Operand }

// LogProb returns the summed log-density of x.
func (d Logistic) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d Logistic) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return checkedLogProbs("Logistic", x, anyReal, []string{"Mu", "Sigma"}, []Operand{d.Mu, d.Sigma}, []domain{anyReal, positiveD}, func(e *expr, o []operand) operand {
		z := e.Div(e.Sub(o[0], o[1]), o[2])
		// −z − 2 log(1 + e^{−z}), with softplus finite in both tails.
		return e.Sub(e.Sub(e.Neg(z), e.Scale(2, e.Softplus(e.Neg(z)))), e.Log(o[2]))
	})
}

// VonMises is the von Mises distribution on the circle with location Mu
// and concentration Kappa ≥ 0 (Stan's von_mises), density
// exp(κ cos(x − μ)) / 2π I₀(κ). It is periodic in x and normalised over
// any interval of length 2π, such as [−π, π].
type VonMises struct{ Mu, Kappa Operand }

// LogProb returns the summed log-density of x.
func (d VonMises) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d VonMises) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return checkedLogProbs("VonMises", x, anyReal, []string{"Mu", "Kappa"}, []Operand{d.Mu, d.Kappa}, []domain{anyReal, nonNegD}, func(e *expr, o []operand) operand {
		k := o[2]
		// κ(cos(x − μ) − 1) − (log I₀(κ) − κ): both terms stay small for
		// a large κ.
		c := e.Mul(k, e.Sub(e.Cos(e.Sub(o[0], o[1])), cst(1)))
		return e.Sub(e.Sub(c, e.Sub(e.LogBesselI0(k), k)), cst(math.Log(2*math.Pi)))
	})
}

// Cos is cos a elementwise.
func (e *expr) Cos(a operand) operand { return e.o1(a, math.Cos, gorgonia.Cos) }

// LogBesselI0 is log I₀(a) elementwise.
func (e *expr) LogBesselI0(a operand) operand {
	return e.o1(a, scalar.LogBesselI0, ops.LogBesselI0)
}

// Abs is |a| elementwise.
func (e *expr) Abs(a operand) operand { return e.o1(a, math.Abs, gorgonia.Abs) }
