package ppl

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Dirichlet is the Dirichlet distribution on the simplex of K entries with
// concentrations Alpha > 0: a vector of K entries, or a scalar for the
// symmetric distribution (Stan's dirichlet). The observation is a vector
// of K entries summing to one, such as a Simplex parameter, or a matrix
// whose rows are observations. Density
// Γ(Σα) / ΠΓ(α_k) · Π x_k^{α_k − 1}.
type Dirichlet struct{ Alpha Operand }

// LogProb returns the summed log-density of the observations in x.
func (d Dirichlet) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each observation (a scalar for a
// vector x, one per row for a matrix x).
func (d Dirichlet) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	const dist = "Dirichlet"
	xo, err := observation(dist, x, func(s tensor.Shape) bool {
		return (len(s) == 1 || len(s) == 2) && s[len(s)-1] >= 2
	}, "a vector of K ≥ 2 entries or a matrix of K ≥ 2 columns")
	if err != nil {
		return nil, err
	}
	s := xo.shape
	k := s[len(s)-1]
	a, err := resolve(dist+".Alpha", d.Alpha)
	if err != nil {
		return nil, err
	}
	if !a.isScalar() && !a.shape.Eq(tensor.Shape{k}) {
		return nil, fmt.Errorf("ppl: %s: Alpha has shape %v, want a scalar or (%d)", dist, a.shape, k)
	}
	if err := checkParam(dist, "Alpha", a, positive, "> 0"); err != nil {
		return nil, err
	}
	if xo.isConst() {
		if err := checkSimplexRows(dist, xo.val, k); err != nil {
			return nil, err
		}
	}
	e := &expr{}
	// log Γ(Σα) − Σ log Γ(α_k), with K copies of a scalar α.
	var norm operand
	if a.isScalar() {
		norm = e.Sub(e.Lgamma(e.Scale(float64(k), a)), e.Scale(float64(k), e.Lgamma(a)))
	} else {
		norm = e.Sub(e.Lgamma(e.sumOperand(a)), e.sumOperand(e.Lgamma(a)))
	}
	am1 := e.Sub(a, cst(1))
	logx := e.Log(xo)
	var kern operand
	switch {
	case len(s) == 1:
		kern = e.sumOperand(e.Mul(am1, logx))
	case a.isScalar():
		kern = e.Mul(am1, e.rowSums(logx, s))
	default:
		kern = e.matVec(logx, am1, s)
	}
	return e.finiteResult(dist, e.Add(kern, norm))
}

// checkSimplexRows checks that each row of k entries of v is positive and
// sums to one.
func checkSimplexRows(dist string, v []float64, k int) error {
	for r := 0; r < len(v)/k; r++ {
		sum := 0.0
		for j, x := range v[r*k : (r+1)*k] {
			if !(x > 0) {
				return fmt.Errorf("ppl: %s: observation %d has entry %d = %v, want > 0", dist, r, j, x)
			}
			sum += x
		}
		if math.Abs(sum-1) > 1e-8*float64(k) {
			return fmt.Errorf("ppl: %s: observation %d sums to %v, not 1", dist, r, sum)
		}
	}
	return nil
}

// rowSums sums the rows of the matrix operand m of shape s.
func (e *expr) rowSums(m operand, s tensor.Shape) operand {
	if m.isConst() {
		out := make([]float64, s[0])
		for i := range s[0] {
			for j := range s[1] {
				out[i] += m.val[i*s[1]+j]
			}
		}
		return operand{val: out, shape: tensor.Shape{s[0]}}
	}
	return onNode(e.sumAlong(m.node, 1))
}

// matVec multiplies the matrix operand m of shape s by the vector v.
func (e *expr) matVec(m, v operand, s tensor.Shape) operand {
	if m.isConst() && v.isConst() {
		out := make([]float64, s[0])
		for i := range s[0] {
			for j := range s[1] {
				out[i] += m.val[i*s[1]+j] * v.val[j]
			}
		}
		return operand{val: out, shape: tensor.Shape{s[0]}}
	}
	return onNode(e.bin(func(a, b *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Mul(a, b) }, e.node(m), e.node(v)))
}
