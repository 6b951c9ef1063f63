package ppl

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Distribution builds log-density graphs. Parameters are Operands:
// constants or nodes, each a scalar or of the observation's shape.
// Densities are normalised (they match gonum's distuv), which matters when
// comparing models. Supports are not checked in the graph: an observation
// outside the support gives a meaningless value or NaN, which the model
// reports as an error; constrain parameters accordingly.
type Distribution interface {
	// LogProb returns a scalar node: the sum of the log-densities of the
	// observations in x.
	LogProb(x *gorgonia.Node) (*gorgonia.Node, error)
	// LogProbs returns the log-density of each observation (one per
	// element of x, or per row for multivariate distributions).
	LogProbs(x *gorgonia.Node) (*gorgonia.Node, error)
}

// total sums pointwise log-densities.
func total(n *gorgonia.Node, err error) (*gorgonia.Node, error) {
	if err != nil {
		return nil, err
	}
	if v, ok := constValues(n); ok {
		t := 0.0
		for _, x := range v {
			t += x
		}
		return gorgonia.NewConstant(t), nil
	}
	e := &expr{}
	s := e.sum(n)
	return s, e.err
}

// constValues returns the values of a graph-less constant node, the result
// of a log-density in which no parameter appears.
func constValues(n *gorgonia.Node) ([]float64, bool) {
	if n == nil || n.Graph() != nil || n.Value() == nil {
		return nil, false
	}
	switch d := n.Value().Data().(type) {
	case float64:
		return []float64{d}, true
	case []float64:
		return d, true
	}
	return nil, false
}

// asOperand views a log-density node as an operand, constant when it is.
func asOperand(n *gorgonia.Node) operand {
	if v, ok := constValues(n); ok {
		return operand{val: append([]float64(nil), v...), shape: nodeShape(n)}
	}
	return onNode(n)
}

// observation resolves dist's observation x, refusing nil and, when ok
// is not nil, a shape that ok refuses (want describes the shapes it takes).
func observation(dist string, x *gorgonia.Node, ok func(s tensor.Shape) bool, want string) (operand, error) {
	if x == nil {
		return operand{}, fmt.Errorf("ppl: %s: nil observation", dist)
	}
	xo, err := resolve(dist+": observation", x)
	if err != nil {
		return operand{}, err
	}
	if ok != nil && !ok(xo.shape) {
		return operand{}, fmt.Errorf("ppl: %s: observation has shape %v, want %s", dist, xo.shape, want)
	}
	return xo, nil
}

// positiveScalar resolves dist's parameter name, v, which must be a
// scalar, and positive when it is a constant.
func positiveScalar(dist, name string, v Operand) (operand, error) {
	o, err := resolve(dist+"."+name, v)
	if err != nil {
		return operand{}, err
	}
	if !o.isScalar() {
		return operand{}, fmt.Errorf("ppl: %s: %s has shape %v, want a scalar", dist, name, o.shape)
	}
	return o, checkParam(dist, name, o, positive, "> 0")
}

// operands resolves x and the named parameters and checks their shapes.
func operands(dist string, x *gorgonia.Node, names []string, vals ...Operand) ([]operand, error) {
	xo, err := observation(dist, x, nil, "")
	if err != nil {
		return nil, err
	}
	out := make([]operand, 0, len(vals)+1)
	out = append(out, xo)
	for i, v := range vals {
		o, err := resolve(dist+"."+names[i], v)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	if _, err := broadcastShape(dist, out...); err != nil {
		return nil, err
	}
	return out, nil
}

// logProbs is the body of an elementwise distribution's LogProbs: it
// resolves x and the named parameters vals (o[0] is x, o[i] is vals[i−1])
// and builds density(o) into a graph.
func logProbs(dist string, x *gorgonia.Node, names []string, vals []Operand, density func(e *expr, o []operand) operand) (*gorgonia.Node, error) {
	o, err := operands(dist, x, names, vals...)
	if err != nil {
		return nil, err
	}
	e := &expr{}
	return e.result(density(e, o))
}

var (
	logSqrt2Pi = 0.5 * math.Log(2*math.Pi)
	logPi      = math.Log(math.Pi)
)

// Normal is the normal distribution with mean Mu and standard deviation
// Sigma.
type Normal struct{ Mu, Sigma Operand }

// LogProb returns the summed log-density of x.
func (d Normal) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d Normal) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("Normal", x, []string{"Mu", "Sigma"}, []Operand{d.Mu, d.Sigma}, func(e *expr, o []operand) operand {
		return e.normal(o[0], o[1], o[2])
	})
}

// normal is −½z² − log σ − ½ log 2π with z = (x − μ)/σ.
func (e *expr) normal(x, mu, sigma operand) operand {
	z := e.Div(e.Sub(x, mu), sigma)
	return e.Sub(e.Scale(-0.5, e.Square(z)), e.Add(e.Log(sigma), cst(logSqrt2Pi)))
}

// HalfNormal is the normal distribution with mean zero and scale Sigma
// folded onto [0, ∞).
type HalfNormal struct{ Sigma Operand }

// LogProb returns the summed log-density of x.
func (d HalfNormal) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d HalfNormal) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("HalfNormal", x, []string{"Sigma"}, []Operand{d.Sigma}, func(e *expr, o []operand) operand {
		return e.Add(e.normal(o[0], cst(0), o[1]), cst(math.Ln2))
	})
}

// LogNormal is the distribution of exp(y) for y normal with mean Mu and
// standard deviation Sigma.
type LogNormal struct{ Mu, Sigma Operand }

// LogProb returns the summed log-density of x.
func (d LogNormal) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d LogNormal) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("LogNormal", x, []string{"Mu", "Sigma"}, []Operand{d.Mu, d.Sigma}, func(e *expr, o []operand) operand {
		lx := e.Log(o[0])
		return e.Sub(e.normal(lx, o[1], o[2]), lx)
	})
}

// StudentT is Student's t distribution with Nu degrees of freedom,
// location Mu and scale Sigma.
type StudentT struct{ Nu, Mu, Sigma Operand }

// LogProb returns the summed log-density of x.
func (d StudentT) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d StudentT) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("StudentT", x, []string{"Nu", "Mu", "Sigma"}, []Operand{d.Nu, d.Mu, d.Sigma}, func(e *expr, o []operand) operand {
		nu, sigma := o[1], o[3]
		half := e.Scale(0.5, e.Add(nu, cst(1))) // (ν+1)/2
		norm := e.Sub(e.Sub(e.Lgamma(half), e.Lgamma(e.Scale(0.5, nu))), e.Scale(0.5, e.Log(e.Scale(math.Pi, nu))))
		z := e.Div(e.Sub(o[0], o[2]), sigma)
		kern := e.Mul(half, e.Log1p(e.Div(e.Square(z), nu)))
		return e.Sub(e.Sub(norm, e.Log(sigma)), kern)
	})
}

// Cauchy is the Cauchy distribution with location Mu and scale Scale.
type Cauchy struct{ Mu, Scale Operand }

// LogProb returns the summed log-density of x.
func (d Cauchy) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d Cauchy) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("Cauchy", x, []string{"Mu", "Scale"}, []Operand{d.Mu, d.Scale}, func(e *expr, o []operand) operand {
		return e.cauchy(o[0], o[1], o[2])
	})
}

func (e *expr) cauchy(x, mu, scale operand) operand {
	z := e.Div(e.Sub(x, mu), scale)
	return e.Neg(e.Add(e.Add(e.Log1p(e.Square(z)), e.Log(scale)), cst(logPi)))
}

// HalfCauchy is the Cauchy distribution with location zero and scale Scale
// folded onto [0, ∞).
type HalfCauchy struct{ Scale Operand }

// LogProb returns the summed log-density of x.
func (d HalfCauchy) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d HalfCauchy) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("HalfCauchy", x, []string{"Scale"}, []Operand{d.Scale}, func(e *expr, o []operand) operand {
		return e.Add(e.cauchy(o[0], cst(0), o[1]), cst(math.Ln2))
	})
}

// Exponential is the exponential distribution with rate Rate.
type Exponential struct{ Rate Operand }

// LogProb returns the summed log-density of x.
func (d Exponential) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d Exponential) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("Exponential", x, []string{"Rate"}, []Operand{d.Rate}, func(e *expr, o []operand) operand {
		return e.Sub(e.Log(o[1]), e.Mul(o[1], o[0]))
	})
}

// Gamma is the gamma distribution with shape Shape (α) and rate Rate (β),
// density βᵅ xᵅ⁻¹ e^{−βx} / Γ(α).
type Gamma struct{ Shape, Rate Operand }

// LogProb returns the summed log-density of x.
func (d Gamma) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d Gamma) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("Gamma", x, []string{"Shape", "Rate"}, []Operand{d.Shape, d.Rate}, func(e *expr, o []operand) operand {
		x0, a, b := o[0], o[1], o[2]
		kern := e.Sub(e.Mul(e.Sub(a, cst(1)), e.Log(x0)), e.Mul(b, x0))
		return e.Add(kern, e.gammaNorm(a, b))
	})
}

// gammaNorm is α log β − log Γ(α), the log normalising constant of the
// gamma and inverse-gamma densities of shape α with rate or scale β.
func (e *expr) gammaNorm(a, b operand) operand {
	return e.Sub(e.Mul(a, e.Log(b)), e.Lgamma(a))
}

// InverseGamma is the inverse-gamma distribution with shape Shape (α) and
// scale Scale (β), density βᵅ x^{−α−1} e^{−β/x} / Γ(α).
type InverseGamma struct{ Shape, Scale Operand }

// LogProb returns the summed log-density of x.
func (d InverseGamma) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return total(d.LogProbs(x))
}

// LogProbs returns the log-density of each element of x.
func (d InverseGamma) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("InverseGamma", x, []string{"Shape", "Scale"}, []Operand{d.Shape, d.Scale}, func(e *expr, o []operand) operand {
		x0, a, b := o[0], o[1], o[2]
		kern := e.Add(e.Mul(e.Add(a, cst(1)), e.Log(x0)), e.Div(b, x0))
		return e.Sub(e.gammaNorm(a, b), kern)
	})
}

// Beta is the beta distribution on (0, 1) with shapes Alpha and Beta.
type Beta struct{ Alpha, Beta Operand }

// LogProb returns the summed log-density of x.
func (d Beta) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d Beta) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("Beta", x, []string{"Alpha", "Beta"}, []Operand{d.Alpha, d.Beta}, func(e *expr, o []operand) operand {
		x0, a, b := o[0], o[1], o[2]
		norm := e.Sub(e.Lgamma(e.Add(a, b)), e.Add(e.Lgamma(a), e.Lgamma(b)))
		kern := e.Add(e.Mul(e.Sub(a, cst(1)), e.Log(x0)), e.Mul(e.Sub(b, cst(1)), e.Log1p(e.Neg(x0))))
		return e.Add(kern, norm)
	})
}

// Uniform is the uniform distribution on (Min, Max).
type Uniform struct{ Min, Max Operand }

// LogProb returns the summed log-density of x.
func (d Uniform) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each element of x.
func (d Uniform) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return logProbs("Uniform", x, []string{"Min", "Max"}, []Operand{d.Min, d.Max}, func(e *expr, o []operand) operand {
		// 0·x carries the observation's shape (and graph) into the result.
		return e.Sub(e.Mul(cst(0), o[0]), e.Log(e.Sub(o[2], o[1])))
	})
}
