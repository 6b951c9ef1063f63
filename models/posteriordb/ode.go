package posteriordb

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// lotkaVolterraSystem is the predator–prey system of LotkaVolterra, states
// z = (hare, lynx) and parameters θ = (α, β, γ, δ):
//
//	dz₁/dt = (α − β z₂) z₁,  dz₂/dt = (−γ + δ z₁) z₂.
//
// It is compiled once, by the first model that needs it, and shared: an
// ops.ODE is immutable and safe for concurrent use.
func lotkaVolterraSystem() (*ops.ODE, error) {
	return ops.NewODE(2, 4, func(_ *gorgonia.Node, z, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		var e nodeErr
		hare, lynx := z[0], z[1]
		alpha, beta, gamma, delta := th[0], th[1], th[2], th[3]
		dHare := e.mul(e.sub(alpha, e.mul(beta, lynx)), hare)
		dLynx := e.mul(e.sub(e.mul(delta, hare), gamma), lynx)
		return []*gorgonia.Node{dHare, dLynx}, e.err
	})
}

// nodeErr writes the right-hand side of an ODE with a sticky error, as
// graph does for a model's builder (an ODE's graph has no builder).
type nodeErr struct{ err error }

func (e *nodeErr) keep(n *gorgonia.Node, err error) *gorgonia.Node {
	if e.err == nil {
		e.err = err
	}
	return n
}

func (e *nodeErr) mul(x, y *gorgonia.Node) *gorgonia.Node { return e.keep(gorgonia.Mul(x, y)) }

func (e *nodeErr) sub(x, y *gorgonia.Node) *gorgonia.Node { return e.keep(gorgonia.Sub(x, y)) }

// lotkaVolterraODE are the tolerances of posteriordb's program
// (integrate_ode_rk45 with relative tolerance 1e-5, absolute 1e-3 and at
// most 500 steps between output times); MaxSteps bounds the whole solve,
// hence 500 per output time.
func lotkaVolterraODE(times int) *ops.ODESettings {
	return &ops.ODESettings{RelTol: 1e-5, AbsTol: 1e-3, MaxSteps: 500 * times}
}

// LotkaVolterra is posteriordb's hudson_lynx_hare-lotka_volterra: the
// Lotka–Volterra predator–prey equations fitted to the Hudson's Bay
// Company's hare and lynx pelts of 1900–1920 (Carpenter 2018),
//
//	dz₁/dt = (α − β z₂) z₁,  dz₂/dt = (−γ + δ z₁) z₂,  z = (hare, lynx),
//	θ = (α, β, γ, δ) > 0,  α, γ ~ normal(1, 0.5),  β, δ ~ normal(0.05, 0.05),
//	z_init ~ lognormal(log 10, 1),  σ ~ lognormal(−1, 1),
//	y_init,k ~ lognormal(log z_init,k, σ_k),
//	y_n,k ~ lognormal(log z_k(t_n), σ_k)  (t_n = 1, …, N; time 0 is 1900).
//
// Parameters theta (4), z_init (2), sigma (2); transformed parameter z
// (N × 2, the solution at the observation times, z.n.k). The solution
// comes from ops.ODESolve (Dormand–Prince 5(4) with forward
// sensitivities) at the program's tolerances. The normal priors are
// truncated to positive values by the constraint; their normalising
// constants 1/Φ(2) and 1/Φ(1) are included, so the density is normalised.
func LotkaVolterra(dataPath string) (*ppl.GraphModel, error) {
	return lotkaVolterra(dataPath, nil)
}

// lotkaVolterra is LotkaVolterra with the ODE settings s, nil meaning the
// posteriordb program's.
func lotkaVolterra(dataPath string, s *ops.ODESettings) (*ppl.GraphModel, error) {
	l := load(dataPath, "hudson_lynx_hare-lotka_volterra.json")
	n := l.integer("N", 1)
	ts := l.boundedVector("ts", n, math.SmallestNonzeroFloat64, math.MaxFloat64)
	yInit := l.boundedVector("y_init", 2, math.SmallestNonzeroFloat64, math.MaxFloat64)
	y := l.matrix("y", n, 2)
	if l.err != nil {
		return nil, l.err
	}
	for i := range n {
		for k := range 2 {
			if !(y.At(i, k) > 0) {
				return nil, l.d.errorf("field \"y\": element [%d, %d] is %v, want > 0 (lognormal observations)", i+1, k+1, y.At(i, k))
			}
		}
		if i > 0 && !(ts[i] > ts[i-1]) {
			return nil, l.d.errorf("field \"ts\": element %d is %v, not after element %d (%v); want increasing times", i+1, ts[i], i, ts[i-1])
		}
	}
	if s == nil {
		s = lotkaVolterraODE(n)
	}
	sys, err := lotkaVolterraSystem()
	if err != nil {
		return nil, err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	theta := b.Positive("theta", 4)
	zInit := b.Positive("z_init", 2)
	sigma := b.Positive("sigma", 2)
	z := b.Check(ops.ODESolve(sys, zInit, theta, 0, ts, s))
	b.Report("z", z)

	b.Sample(ppl.Normal{Mu: []float64{1, 0.05, 1, 0.05}, Sigma: []float64{0.5, 0.05, 0.5, 0.05}}, theta)
	// The normal priors restricted to θ > 0: log Φ(μ/σ) is Φ(2) for α, γ
	// and Φ(1) for β, δ.
	b.AddLogDensity(g.c(-2 * (math.Log(distuv.UnitNormal.CDF(2)) + math.Log(distuv.UnitNormal.CDF(1)))))
	b.Sample(ppl.LogNormal{Mu: -1.0, Sigma: 1.0}, sigma)
	b.Sample(ppl.LogNormal{Mu: math.Log(10), Sigma: 1.0}, zInit)
	b.Sample(ppl.LogNormal{Mu: g.log(zInit), Sigma: sigma}, b.Data("y_init", yInit))
	logZ := g.log(z)
	for k := range 2 {
		col := make([]float64, n)
		for i := range col {
			col[i] = y.At(i, k)
		}
		muK := b.Check(ops.Slice(logZ, nil, gorgonia.S(k)))
		b.Sample(ppl.LogNormal{Mu: muK, Sigma: g.at(sigma, k)}, b.Data([]string{"y_hare", "y_lynx"}[k], col))
	}
	m, err := b.Model()
	if err != nil {
		return nil, err
	}
	// Stan's default start, uniform on (−2, 2) for every unconstrained
	// coordinate, can put θ where the cycles are several times faster than
	// the data's ten years; NUTS then settles in a local mode of such fast
	// cycles, each solve costing many steps. Every chain starts instead at
	// the prior's centre with the first observations as initial states.
	return m.WithInit(map[string][]float64{
		"theta": {1, 0.05, 1, 0.05}, "z_init": yInit, "sigma": {0.5, 0.5},
	})
}
