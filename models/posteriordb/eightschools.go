package posteriordb

import "github.com/trjgo/trj/ppl"

// eightSchoolsData is the data of both eight schools models: J estimated
// treatment effects y with their standard errors sigma.
type eightSchoolsData struct {
	j        int
	y, sigma []float64
}

func loadEightSchools(path, file string) (*eightSchoolsData, error) {
	l := load(path, file)
	d := &eightSchoolsData{}
	d.j = l.integer("J", 1)
	d.y = l.vector("y", d.j)
	d.sigma = l.boundedVector("sigma", d.j, 0, maxFloat)
	if l.err == nil {
		for i, s := range d.sigma {
			if !(s > 0) {
				l.keep(l.d.errorf("field \"sigma\": element %d is %v, want > 0", i+1, s))
			}
		}
	}
	return d, l.err
}

// EightSchoolsNoncentered is posteriordb's eight_schools_noncentered: the
// hierarchical model of J school effects with the effects written as
// θ = μ + τ·θ̃ (the non-centred parameterisation):
//
//	θ̃_j ~ normal(0, 1),  μ ~ normal(0, 5),  τ ~ half-Cauchy(0, 5),
//	y_j ~ normal(μ + τ·θ̃_j, σ_j).
//
// Parameters theta_trans (J), mu, tau > 0; transformed parameter theta (J).
func EightSchoolsNoncentered(dataPath string) (*ppl.GraphModel, error) {
	d, err := loadEightSchools(dataPath, "eight_schools-eight_schools_noncentered.json")
	if err != nil {
		return nil, err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	thetaTrans := b.Real("theta_trans", d.j)
	mu := b.Real("mu")
	tau := b.Positive("tau")
	theta := g.add(g.mul(thetaTrans, tau), mu)
	b.Report("theta", theta)
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 1.0}, thetaTrans)
	b.Sample(ppl.Normal{Mu: theta, Sigma: d.sigma}, b.Data("y", d.y))
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 5.0}, mu)
	b.Sample(ppl.HalfCauchy{Scale: 5.0}, tau)
	return b.Model()
}

// EightSchoolsCentered is posteriordb's eight_schools_centered, the same
// posterior as EightSchoolsNoncentered with the effects as parameters:
//
//	μ ~ normal(0, 5),  τ ~ half-Cauchy(0, 5),  θ_j ~ normal(μ, τ),
//	y_j ~ normal(θ_j, σ_j).
//
// Parameters mu, tau > 0, theta (J). Small τ makes a funnel that NUTS
// cannot explore fully: expect divergences, and compare the lower
// quantiles of tau with the non-centred model's.
func EightSchoolsCentered(dataPath string) (*ppl.GraphModel, error) {
	d, err := loadEightSchools(dataPath, "eight_schools-eight_schools_centered.json")
	if err != nil {
		return nil, err
	}
	b := ppl.NewBuilder()
	mu := b.Real("mu")
	tau := b.Positive("tau")
	theta := b.Real("theta", d.j)
	b.Sample(ppl.HalfCauchy{Scale: 5.0}, tau)
	b.Sample(ppl.Normal{Mu: mu, Sigma: tau}, theta)
	b.Sample(ppl.Normal{Mu: theta, Sigma: d.sigma}, b.Data("y", d.y))
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 5.0}, mu)
	return b.Model()
}
