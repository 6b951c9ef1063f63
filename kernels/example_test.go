package kernels_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trjgo/trj/kernels"
)

// stdNormal is N(mu, 1) in n dimensions.
type stdNormal struct {
	n  int
	mu float64
}

func (s stdNormal) Dim() int { return s.n }

func (s stdNormal) LogDensityGrad(x, grad []float64) (float64, error) {
	lp := 0.0
	for i, v := range x {
		lp -= 0.5 * (v - s.mu) * (v - s.mu)
		grad[i] = s.mu - v
	}
	return lp, nil
}

func ExampleSample() {
	res, err := kernels.Sample(context.Background(),
		func(chain int) (kernels.Target, error) { return stdNormal{n: 3, mu: 2}, nil }, &kernels.SampleSettings{Chains: 4, Warmup: 500, Draws: 500, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, n := 0.0, 0
	for _, c := range res.Chains {
		for _, v := range c.Draws {
			sum += v
			n++
		}
	}
	fmt.Printf("%d chains of %d draws; posterior mean ≈ %.1f\n", len(res.Chains), len(res.Chains[0].Info), sum/float64(n))
	// Output: 4 chains of 500 draws; posterior mean ≈ 2.0
}

func ExampleNUTS() {
	k, err := kernels.NewNUTS(stdNormal{n: 2}, 0.8, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := k.Init([]float64{0, 0})
	if err != nil {
		fmt.Println(err)
		return
	}
	rng := rand.New(rand.NewPCG(1, 0))
	sumSq := 0.0
	for i := 0; i < 2000; i++ {
		s, _ = k.Step(rng, s)
		sumSq += s.Position[0] * s.Position[0]
	}
	fmt.Printf("E[x²] ≈ %.1f\n", sumSq/2000)
	// Output: E[x²] ≈ 1.0
}

// coin is a Beta(1, 1) prior on the logit θ of a coin seen to land heads 7
// times in 10; its evidence is 1/(11·C(10, 7)).
type coin struct{}

func (coin) Dim() int { return 1 }

func (coin) LogPriorLik(x, gp, gl []float64) (float64, float64, error) {
	// Uniform prior on θ = σ(x): log density log σ(x) + log σ(−x).
	lsp, lsm := -math.Log1p(math.Exp(-x[0])), -math.Log1p(math.Exp(x[0]))
	if gp != nil {
		p := 1 / (1 + math.Exp(-x[0]))
		gp[0], gl[0] = 1-2*p, 7-10*p
	}
	return lsp + lsm, 7*lsp + 3*lsm, nil
}

func (coin) SamplePrior(rng *rand.Rand, x []float64) error {
	u := rng.Float64()
	x[0] = math.Log(u / (1 - u))
	return nil
}

func ExampleRunSMC() {
	res, err := kernels.RunSMC(context.Background(),
		func(worker int) (kernels.TemperedModel, error) { return coin{}, nil },
		&kernels.SMCSettings{Particles: 2000, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("log Z ≈ %.1f (exact %.1f)\n", res.LogZ, -math.Log(11*120))
	// Output: log Z ≈ -7.2 (exact -7.2)
}
