package selection_test

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/selection"
)

// Variable selection over the 2^6 linear regressions of y on six candidate
// predictors, of which two matter. The same code runs p = 20 (a million
// models) with the default settings: no pilot per model, models built on
// first visit.
func ExampleRun() {
	rng := rand.New(rand.NewPCG(1, 2))
	n, p := 100, 6
	X := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		for j := range p {
			X.Set(i, j, rng.NormFloat64())
		}
		y[i] = 1 + 2*X.At(i, 0) - 1.5*X.At(i, 2) + rng.NormFloat64()
	}

	sp, err := glmselect.Gaussian(X, y, nil) // unit-information g-prior, intercept always in
	if err != nil {
		log.Fatal(err)
	}
	res, err := selection.Run(context.Background(), sp, &selection.Settings{Seed: 1, Steps: 2000})
	if err != nil {
		log.Fatal(err)
	}
	// fmt.Print(res) prints the table; res.WriteJSON saves the result.
	for j, e := range res.PIP {
		fmt.Printf("%s: PIP %.1f\n", res.Names[j], e.P)
	}
	fmt.Printf("most visited model: {%s}\n", res.Top[0].Label)
	// Output:
	// x1: PIP 1.0
	// x2: PIP 0.2
	// x3: PIP 1.0
	// x4: PIP 0.1
	// x5: PIP 0.1
	// x6: PIP 0.1
	// most visited model: {x1,x3}
}
