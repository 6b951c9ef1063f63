package ppl_test

import (
	"fmt"
	"log"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ppl"
)

// The eight schools model, non-centred: theta = mu + tau·eta.
func Example() {
	b := ppl.NewBuilder()
	mu := b.Real("mu")
	tau := b.Positive("tau")
	eta := b.Real("eta", 8)
	theta := b.Check(gorgonia.Add(mu, b.Check(gorgonia.Mul(tau, eta))))
	y := b.Data("y", []float64{28, 8, -3, 7, -1, 1, 18, 12})
	sigma := b.Data("sigma", []float64{15, 10, 16, 11, 9, 11, 10, 18})
	b.Sample(ppl.Normal{Mu: 0, Sigma: 5}, mu)
	b.Sample(ppl.HalfCauchy{Scale: 5}, tau)
	b.Sample(ppl.Normal{Mu: 0, Sigma: 1}, eta)
	b.Sample(ppl.Normal{Mu: theta, Sigma: sigma}, y)
	b.Report("theta", theta)
	m, err := b.Model()
	if err != nil {
		log.Fatal(err)
	}

	// Start from a chosen constrained point rather than Stan's random one.
	m, err = m.WithInit(map[string][]float64{"mu": {4}, "tau": {2}, "eta": {1, 0, 0, 0, 0, 0, 0, -1}})
	if err != nil {
		log.Fatal(err)
	}
	u := make([]float64, m.Dim())
	_ = m.Init(nil, u)
	grad := make([]float64, m.Dim())
	lp, _ := m.LogDensityGrad(u, grad)
	x := make([]float64, len(m.ParamNames()))
	_ = m.Constrain(u, x)
	fmt.Printf("dim %d, log density %.4f, d/dmu %.4f\n", m.Dim(), lp, grad[0])
	fmt.Println(m.ParamNames()[10], x[10], m.ParamNames()[17], x[17])
	// Output:
	// dim 10, log density -42.6512, d/dmu 0.0596
	// theta.1 6 theta.8 2
}

// A two-model space for block variable selection: y = β₀ + β₁x + ε, with
// β₁ in or out. In the saturated layout β_i sits at position i.
func ExampleSpace() {
	x := []float64{-1, 0, 1, 2}
	y := []float64{-0.8, 0.1, 1.2, 1.9}
	ind := [][]int{{1, 0}, {1, 1}}
	var models []ppl.Model
	for _, k := range ind {
		b := ppl.NewBuilder()
		beta := b.Real("beta", k[0]+k[1])
		b.Sample(ppl.Normal{Mu: 0, Sigma: 10}, beta)
		design := make([]float64, 0, 2*len(x))
		for _, xi := range x {
			design = append(design, 1)
			if k[1] == 1 {
				design = append(design, xi)
			}
		}
		mu := b.Check(gorgonia.Mul(b.Data("X", design, len(x), k[0]+k[1]), beta))
		b.Sample(ppl.Normal{Mu: mu, Sigma: 1}, b.Data("y", y))
		m, err := b.Model()
		if err != nil {
			log.Fatal(err)
		}
		models = append(models, m)
	}
	s, err := ppl.NewSpace(models, ppl.WithIndicators(ind), ppl.WithPositions(ppl.IndicatorPositions(ind)))
	if err != nil {
		log.Fatal(err)
	}
	k, _ := s.Index("1,1")
	mask, _ := s.Active(0)
	xi := []float64{0.5, 0.9} // model "1,0": β₀ = 0.5 and an auxiliary 0.9
	lp0, _ := s.SaturatedLogDensity(0, xi)
	lp1, _ := s.SaturatedLogDensity(k, xi)
	fmt.Println(s.NumModels(), s.MaxDim(), k, s.ModelLabel(k), mask)
	fmt.Printf("%.4f %.4f\n", lp0, lp1)
	// Output:
	// 2 2 1 1,1 [true false]
	// -11.0656 -11.0772
}
