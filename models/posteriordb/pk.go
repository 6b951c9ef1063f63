package posteriordb

import (
	"math"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// oneCompMMSystem is the one-compartment model with first-order absorption
// and Michaelis–Menten elimination of OneCompMMElimAbs: the concentration
// C, the parameters θ = (k_a, K_m, V_m), the dose D and volume V fixed,
//
//	dC/dt = D k_a e^{−k_a t} / V − (V_m / V) C / (K_m + C).
//
// The Stan program sets the absorption term to zero at t = 0 exactly; a
// single instant changes no solution, so the system here is the
// continuous one.
func oneCompMMSystem(dose, volume float64) (*ops.ODE, error) {
	return ops.NewODE(1, 3, func(t *gorgonia.Node, y, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		var e nodeErr
		c, ka, km, vm := y[0], th[0], th[1], th[2]
		absorb := e.mul(gorgonia.NewConstant(dose/volume), e.mul(ka, e.keep(gorgonia.Exp(e.keep(gorgonia.Neg(e.mul(ka, t)))))))
		elim := e.mul(e.mul(gorgonia.NewConstant(1/volume), vm), e.keep(gorgonia.Div(c, e.keep(gorgonia.Add(km, c)))))
		return []*gorgonia.Node{e.sub(absorb, elim)}, e.err
	})
}

// oneCompMMODE are the solver's tolerances: the relative and absolute
// tolerances 1e-6 of Stan's integrate_ode_bdf, which the program calls,
// in an explicit solver (the system is not stiff over the posterior).
func oneCompMMODE() *ops.ODESettings {
	return &ops.ODESettings{RelTol: 1e-6, AbsTol: 1e-6}
}

// OneCompMMElimAbs is posteriordb's one_comp_mm_elim_abs: a one-compartment
// pharmacokinetic model with first-order absorption of a dose D into a
// volume V and Michaelis–Menten (saturable) elimination, fitted to
// simulated concentrations,
//
//	dC/dt = D k_a e^{−k_a t} / V − (V_m / V) C / (K_m + C),  C(t₀) = 0,
//	k_a, K_m, V_m, σ ~ half-Cauchy(0, 1),
//	Ĉ_n ~ lognormal(log C(t_n), σ).
//
// Parameters k_a, K_m, V_m, sigma; transformed parameter C (N_t × 1, the
// solution at the measurement times, C.n.1). The solution comes from
// ops.ODESolve (Dormand–Prince 5(4) with forward sensitivities) at the
// program's tolerances. The half-Cauchy priors are normalised.
func OneCompMMElimAbs(dataPath string) (*ppl.GraphModel, error) {
	return oneCompMMElimAbs(dataPath, nil)
}

// oneCompMMElimAbs is OneCompMMElimAbs with the ODE settings s, nil meaning
// the program's.
func oneCompMMElimAbs(dataPath string, s *ops.ODESettings) (*ppl.GraphModel, error) {
	l := load(dataPath, "one_comp_mm_elim_abs-one_comp_mm_elim_abs.json")
	t0 := l.number("t0")
	dose := l.number("D")
	volume := l.number("V")
	n := l.integer("N_t", 1)
	times := l.vector("times", n)
	cHat := l.boundedVector("C_hat", n, math.SmallestNonzeroFloat64, math.MaxFloat64)
	if l.err == nil && !(dose > 0 && volume > 0) {
		l.keep(l.d.errorf("D = %v, V = %v: want a positive dose and volume", dose, volume))
	}
	if l.err != nil {
		return nil, l.err
	}
	for i, t := range times {
		prev := t0
		if i > 0 {
			prev = times[i-1]
		}
		if !(t > prev) {
			return nil, l.d.errorf("field \"times\": element %d is %v, not after %v; want increasing times after t0", i+1, t, prev)
		}
	}
	if s == nil {
		s = oneCompMMODE()
	}
	sys, err := oneCompMMSystem(dose, volume)
	if err != nil {
		return nil, err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	ka := b.Positive("k_a")
	km := b.Positive("K_m")
	vm := b.Positive("V_m")
	sigma := b.Positive("sigma")
	theta := b.Check(ops.Concat(0, g.vec1(ka), g.vec1(km), g.vec1(vm)))
	c := b.Check(ops.ODESolve(sys, b.Data("C0", []float64{0}), theta, t0, times, s))
	b.Report("C", c)
	for _, p := range []*gorgonia.Node{ka, km, vm, sigma} {
		b.Sample(ppl.HalfCauchy{Scale: 1.0}, p)
	}
	b.Sample(ppl.LogNormal{Mu: g.log(c), Sigma: sigma}, b.Data("C_hat", cHat, n, 1))
	return b.Model()
}

// vec1 reshapes a scalar node into a vector of one element.
func (g graph) vec1(x *gorgonia.Node) *gorgonia.Node {
	return g.b.Check(gorgonia.Reshape(x, []int{1}))
}
