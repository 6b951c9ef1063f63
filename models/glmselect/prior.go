package glmselect

import (
	"fmt"
	"math"
	"strconv"
)

// GaussianPrior is the prior on the parameters of each model of the
// Gaussian family (Settings.Prior; nil means GPrior{}, the unit-information
// g-prior): one of GPrior, BRIC, HyperG, HyperGN, ZellnerSiow and
// NormalInverseGamma. Every value's zero fields take their documented
// defaults, and String names the prior and its values for outputs.
type GaussianPrior interface {
	String() string
	// gaussianPrior seals the interface: the closed-form evidence and the
	// graph are written for these priors only.
	gaussianPrior()
}

// DefaultHyperA is the default a of HyperG and HyperGN, within Liang et
// al.'s (2008) recommended 2 < a ≤ 4: the shrinkage g/(1+g) is then
// Beta(1, 1/2), of prior mean 2/3.
const DefaultHyperA = 3.0

// GPrior is Zellner's g-prior with a fixed g, on the coefficients of the
// centred predictors: β_γ | σ² ~ N(0, g σ² (X_γᵀX_γ)⁻¹), a flat prior on
// the intercept and p(σ²) ∝ 1/σ². It does not depend on the units of y or
// of any predictor. G = 0 means the unit-information prior g = n, the
// default of the Gaussian family (BMS's g = "UIP").
type GPrior struct{ G float64 }

// BRIC is the g-prior with g = max(n, p²) (Fernández, Ley and Steel 2001),
// which favours smaller models than the unit-information prior when p² > n.
type BRIC struct{}

// HyperG is Liang et al.'s (2008) hyper-g prior: the g-prior with
// p(g) = (a−2)/2 (1+g)^(−a/2), 2 < a ≤ 4 (A = 0 means 3), so that the
// shrinkage g/(1+g) ~ Beta(1, a/2 − 1). The model samples the shrinkage.
type HyperG struct{ A float64 }

// HyperGN is Liang et al.'s hyper-g/n prior: g/n has the hyper-g prior,
// p(g) = (a−2)/(2n) (1+g/n)^(−a/2), which keeps the prior's mass near the
// unit-information g = n as n grows (A = 0 means 3).
type HyperGN struct{ A float64 }

// ZellnerSiow is the g-prior with g ~ InverseGamma(1/2, n/2), which makes
// the coefficients' prior a multivariate Cauchy (Zellner and Siow 1980).
// The model samples log g.
type ZellnerSiow struct{}

// NormalInverseGamma is the conjugate normal-inverse-gamma prior trj used
// by default before the g-priors: on the standardised predictors every
// coefficient, intercept included, β | σ² ~ N(0, σ² G), and
// σ² ~ InverseGamma(A, B) (defaults G = 1, A = B = 0.01). Its intercept
// prior and its σ² prior depend on the units of y, so what it selects
// does too; it is kept for comparisons with earlier runs.
type NormalInverseGamma struct{ G, A, B float64 }

func (GPrior) gaussianPrior()             {}
func (BRIC) gaussianPrior()               {}
func (HyperG) gaussianPrior()             {}
func (HyperGN) gaussianPrior()            {}
func (ZellnerSiow) gaussianPrior()        {}
func (NormalInverseGamma) gaussianPrior() {}

func (q GPrior) String() string {
	if q.G == 0 {
		return "g-prior(g=n)"
	}
	return "g-prior(g=" + num(q.G) + ")"
}
func (BRIC) String() string { return "g-prior(g=max(n,p²))" }
func (q HyperG) String() string {
	return "hyper-g(a=" + num(orDefault(q.A, DefaultHyperA)) + ")"
}
func (q HyperGN) String() string {
	return "hyper-g/n(a=" + num(orDefault(q.A, DefaultHyperA)) + ")"
}
func (ZellnerSiow) String() string { return "zellner-siow" }
func (q NormalInverseGamma) String() string {
	q = q.withDefaults()
	return "normal-inverse-gamma(g=" + num(q.G) + ",a=" + num(q.A) + ",b=" + num(q.B) + ")"
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func orDefault(x, d float64) float64 {
	if x == 0 {
		return d
	}
	return x
}

func (q NormalInverseGamma) withDefaults() NormalInverseGamma {
	return NormalInverseGamma{G: orDefault(q.G, DefaultG), A: orDefault(q.A, DefaultA), B: orDefault(q.B, DefaultB)}
}

// gKind is how a g-prior's g is given.
type gKind int

const (
	gFixed  gKind = iota
	gHyper        // shrinkage g/(1+g) ~ Beta(1, a/2 − 1)
	gHyperN       // shrinkage (g/n)/(1+g/n) ~ Beta(1, a/2 − 1)
	gZS           // g ~ InverseGamma(1/2, n/2)
	gNIG          // not a g-prior
)

// resolved is a Gaussian prior with its defaults applied for n
// observations and p candidate terms.
type resolved struct {
	kind    gKind
	g       float64 // fixed g (gFixed, gNIG)
	a       float64 // hyper-g's a
	nig     NormalInverseGamma
	n       float64
	display GaussianPrior
}

// Values returns a prior's values with its defaults applied for n
// observations and p candidate terms, by snake_case name (for JSON
// outputs): "g" for the fixed-g priors, "a" for the hyper-g priors, "g",
// "a" and "b" for the normal-inverse-gamma prior, none for Zellner–Siow.
func Values(q GaussianPrior, n, p int) (map[string]float64, error) {
	r, err := resolve(q, n, p)
	if err != nil {
		return nil, err
	}
	switch r.kind {
	case gFixed:
		return map[string]float64{"g": r.g}, nil
	case gHyper, gHyperN:
		return map[string]float64{"a": r.a}, nil
	case gNIG:
		return map[string]float64{"g": r.nig.G, "a": r.nig.A, "b": r.nig.B}, nil
	}
	return map[string]float64{}, nil
}

func resolve(q GaussianPrior, n, p int) (resolved, error) {
	if q == nil {
		q = GPrior{}
	}
	r := resolved{n: float64(n), display: q}
	pos := func(name string, x float64) error {
		if !(x > 0) || math.IsInf(x, 1) {
			return fmt.Errorf("glmselect: %v: %s = %v, want positive and finite", q, name, x)
		}
		return nil
	}
	switch q := q.(type) {
	case GPrior:
		r.kind, r.g = gFixed, orDefault(q.G, float64(n))
		return r, pos("G", r.g)
	case BRIC:
		r.kind, r.g = gFixed, math.Max(float64(n), float64(p)*float64(p))
	case HyperG, HyperGN:
		a := q.(interface{ aValue() float64 }).aValue()
		r.kind, r.a = gHyper, orDefault(a, DefaultHyperA)
		if _, ok := q.(HyperGN); ok {
			r.kind = gHyperN
		}
		if !(r.a > 2) || math.IsInf(r.a, 1) {
			return r, fmt.Errorf("glmselect: %v: A = %v, want a > 2 (a proper prior on g) and finite", q, r.a)
		}
	case ZellnerSiow:
		r.kind = gZS
	case NormalInverseGamma:
		r.kind, r.nig = gNIG, q.withDefaults()
		r.g = r.nig.G
		for _, v := range []struct {
			name string
			x    float64
		}{{"G", r.nig.G}, {"A", r.nig.A}, {"B", r.nig.B}} {
			if err := pos(v.name, v.x); err != nil {
				return r, err
			}
		}
	default:
		return r, fmt.Errorf("glmselect: unknown Gaussian prior %T", q)
	}
	return r, nil
}

func (q HyperG) aValue() float64  { return q.A }
func (q HyperGN) aValue() float64 { return q.A }

// logPriorG is log p(g) of the hyper priors, the density of g itself.
func (r *resolved) logPriorG(g float64) float64 {
	switch r.kind {
	case gHyper:
		return math.Log((r.a-2)/2) - r.a/2*math.Log1p(g)
	case gHyperN:
		return math.Log((r.a-2)/(2*r.n)) - r.a/2*math.Log1p(g/r.n)
	case gZS:
		lg, _ := math.Lgamma(0.5)
		return 0.5*math.Log(r.n/2) - lg - 1.5*math.Log(g) - r.n/(2*g)
	}
	return math.NaN()
}

// isG reports whether the prior is a g-prior (fixed or hyper).
func (r *resolved) isG() bool { return r.kind != gNIG }
