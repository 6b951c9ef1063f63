package kernels_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/ppl/draws"

	"github.com/trjgo/trj/kernels"
)

// The method is a value: RWMMethod with its settings instead of NUTS, and
// Shard runs chains 1 and 3 of a four-chain run, each seeded as in the
// whole run (another process can run chains 0 and 2).
func ExampleRWMMethod() {
	res, err := kernels.Sample(context.Background(),
		func(chain int) (kernels.Target, error) { return stdNormal{n: 2, mu: 2}, nil },
		&kernels.SampleSettings{
			Method: kernels.RWMMethod{Adapt: kernels.RWMAdaptConfig{AdaptCovariance: true}},
			Chains: 4, Shard: []int{1, 3}, Warmup: 2000, Draws: 4000, Seed: 1,
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Chains {
		sum := 0.0
		for _, v := range c.Draws {
			sum += v
		}
		fmt.Printf("chain %d: %d draws, mean ≈ %.1f\n", c.Chain, len(c.Info), sum/float64(len(c.Draws)))
	}
	// Output:
	// chain 1: 4000 draws, mean ≈ 2.0
	// chain 3: 4000 draws, mean ≈ 2.0
}

// independence is a Method of one's own: independence Metropolis–Hastings
// with proposals N(0, Scale²·I), no warm-up adaptation.
type independence struct{ Scale float64 }

func (independence) DiagnosticColumns() []string { return []string{draws.LP, draws.AcceptStat} }

func (m independence) NewChain(t kernels.Target, x0 []float64, _ int) (kernels.MethodChain, error) {
	c := &independenceChain{m: m, t: t, x: append([]float64(nil), x0...), y: make([]float64, len(x0)), g: make([]float64, len(x0))}
	var err error
	c.lp, err = t.LogDensityGrad(c.x, c.g)
	return c, err
}

type independenceChain struct {
	m       independence
	t       kernels.Target
	x, y, g []float64
	lp      float64
	evals   int
}

// logQ is the proposal's log-density up to a constant.
func (c *independenceChain) logQ(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s -= 0.5 * v * v / (c.m.Scale * c.m.Scale)
	}
	return s
}

func (c *independenceChain) Step(rng *rand.Rand, _ int) ([]float64, kernels.DrawInfo, error) {
	for i := range c.y {
		c.y[i] = c.m.Scale * rng.NormFloat64()
	}
	lp, err := c.t.LogDensityGrad(c.y, c.g)
	c.evals++
	a := 0.0
	if err == nil && !math.IsNaN(lp) {
		a = math.Min(1, math.Exp(lp-c.lp+c.logQ(c.x)-c.logQ(c.y)))
	}
	if rng.Float64() < a {
		c.x, c.y, c.lp = c.y, c.x, lp
	}
	return c.x, kernels.DrawInfo{LogDensity: c.lp, AcceptStat: a}, nil
}

func (c *independenceChain) Adapted(*kernels.Chain) {}
func (c *independenceChain) GradEvals() int         { return c.evals }

// A Method of one's own runs in Sample's chains like NUTS and RWM: Sample
// gives it the chain's target, start and random stream, and keeps, times
// and reports its draws.
func ExampleMethod() {
	res, err := kernels.Sample(context.Background(),
		func(chain int) (kernels.Target, error) { return stdNormal{n: 1, mu: 2}, nil },
		&kernels.SampleSettings{Method: independence{Scale: 4}, Chains: 2, Warmup: -1, Draws: 5000, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Chains {
		accept := 0.0
		for _, d := range c.Info {
			accept += d.AcceptStat
		}
		fmt.Printf("chain %d: mean %.1f, acceptance %.2f, %d evaluations\n", c.Chain, stat.Mean(c.Draws, nil), accept/float64(len(c.Info)), c.SampleGradEvals)
	}
	// Output:
	// chain 0: mean 2.0, acceptance 0.27, 5000 evaluations
	// chain 1: mean 2.0, acceptance 0.28, 5000 evaluations
}
