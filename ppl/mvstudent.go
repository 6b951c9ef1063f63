package ppl

import (
	"errors"
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
)

// MvStudentT is the multivariate Student-t distribution with Nu > 0
// degrees of freedom (a scalar), location Mu (a vector, or a scalar for a
// constant location) and either scale matrix Sigma or its lower Cholesky
// factor L (set exactly one), as in MvNormal (Stan's multi_student_t).
// The observation is a vector or a matrix whose rows are observations.
// Density in n dimensions
// Γ((ν+n)/2) / (Γ(ν/2) (νπ)^{n/2} |Σ|^{1/2}) · (1 + (x−μ)ᵀΣ⁻¹(x−μ)/ν)^{−(ν+n)/2}.
type MvStudentT struct {
	Nu    Operand
	Mu    Operand
	Sigma Operand
	L     Operand
}

// LogProb returns the summed log-density of the observations in x.
func (d MvStudentT) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each observation (a scalar for a
// vector x, one per row for a matrix x).
func (d MvStudentT) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	const dist = "MvStudentT"
	if x == nil {
		return nil, errors.New("ppl: MvStudentT: nil observation")
	}
	xs := nodeShape(x)
	if len(xs) != 1 && len(xs) != 2 {
		return nil, fmt.Errorf("ppl: %s: observation has shape %v, want a vector or a matrix", dist, xs)
	}
	nu, err := positiveScalar(dist, "Nu", d.Nu)
	if err != nil {
		return nil, err
	}
	n := xs[len(xs)-1]
	e := &expr{}
	f, err := newMvFactor(e, dist, d.Mu, d.Sigma, d.L, n)
	if err != nil {
		return nil, err
	}
	quad := f.quadratic(e, x, xs)
	fn := float64(n)
	half := e.Scale(0.5, e.Add(nu, cst(fn))) // (ν+n)/2
	norm := e.Sub(e.Sub(e.Lgamma(half), e.Lgamma(e.Scale(0.5, nu))), e.Scale(0.5*fn, e.Log(e.Scale(math.Pi, nu))))
	kern := e.Mul(half, e.Log1p(e.Div(quad, nu)))
	return e.finiteResult(dist, e.Sub(e.Sub(norm, f.halfLogDet), kern))
}
