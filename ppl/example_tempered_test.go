package ppl_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// SMC evidence of a ppl model with no hand-written prior sampler: a normal
// mean with a normal prior, whose exact evidence is the N(0, 1 + 4) density
// of y = 1.
func ExampleGraphModel_Tempered() {
	b := ppl.NewBuilder()
	mu := b.Real("mu")
	b.Sample(ppl.Normal{Mu: 0, Sigma: 2}, mu)   // prior: a Sample on a parameter
	b.Sample(ppl.Normal{Mu: mu, Sigma: 1}, 1.0) // likelihood: a Sample on data
	model, err := b.Model()
	if err != nil {
		log.Fatal(err)
	}
	tm, err := model.Tempered()
	if err != nil {
		log.Fatal(err)
	}
	res, err := kernels.RunSMC(context.Background(),
		func(int) (kernels.TemperedModel, error) { return tm.Clone(), nil },
		&kernels.SMCSettings{Particles: 500, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	exact := -0.5*math.Log(2*math.Pi*5) - 0.5*1.0/5
	fmt.Printf("prior form: %v\n", tm.FromPrior())
	fmt.Printf("log Z %.1f (exact %.4f)\n", res.LogZ, exact)
	// Output:
	// prior form: true
	// log Z -1.8 (exact -1.8237)
}
