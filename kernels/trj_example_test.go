package kernels_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/sas"
)

// TRJ on the paper's sinh-arcsinh target with its exact transports. With
// j_k(k') = π(k') every jump is accepted (the corollary to Proposition 1).
func ExampleTRJ() {
	target := sas.Paper()
	var transports []kernels.Transport
	for _, t := range target.Transports() {
		transports = append(transports, t)
	}
	jump, _ := kernels.ProportionalJumps([]float64{0.25, 0.75})
	within, _ := kernels.NewModelRandomWalk(target, nil) // nil: identity covariances
	trj, err := kernels.NewTRJ(kernels.TRJConfig{
		Target: target, Transports: transports, Jump: jump, Within: within, Alternate: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rng := rand.New(rand.NewPCG(1, 2))
	s, _ := trj.Init(0, []float64{-3})
	proposed, accepted := 0, 0
	for i := 0; i < 10000; i++ {
		var info kernels.RJInfo
		s, info = trj.Step(rng, s)
		if info.Jumped {
			proposed++
			if info.JumpAccepted {
				accepted++
			}
		}
	}
	freq := s.ModelFrequencies(nil)
	fmt.Println("every jump accepted:", proposed > 0 && accepted == proposed)
	fmt.Printf("π̂(%s) = %.2f\n", target.ModelLabel(1), freq[1])
	// Output:
	// every jump accepted: true
	// π̂(k=2) = 0.75
}

// The Bartolucci bridge estimator from one TRJ proposal per evaluation
// draw.
func ExampleBartolucciBridge() {
	target := sas.Paper()
	var transports []kernels.Transport
	for _, t := range target.Transports() {
		transports = append(transports, t)
	}
	jump := kernels.UniformJumps(2)
	trj, _ := kernels.NewTRJ(kernels.TRJConfig{Target: target, Transports: transports, Jump: jump})
	rng := rand.New(rand.NewPCG(3, 4))
	draws := make([][][]float64, 2)
	for k := range draws {
		for i := 0; i < 1000; i++ {
			theta := make([]float64, target.ModelDim(k))
			_ = target.Component(k).Sample(rng, theta)
			draws[k] = append(draws[k], theta)
		}
	}
	records, _ := kernels.EvaluationJumps(rng, trj, draws)
	est, err := kernels.BartolucciBridge(records, jump, []float64{0.25, 0.75})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("raw π̂ = (%.3f, %.3f)\n", est.Raw[0], est.Raw[1])
	// Output:
	// raw π̂ = (0.250, 0.750)
}
