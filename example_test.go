package trj_test

import (
	"context"
	"fmt"
	"log"

	"github.com/trjgo/trj"
)

// Which predictors does y need? Eight regression models (every subset of
// three predictors, the noise variance shared by all) compared in one call.
func ExampleRun() {
	space, _, err := subsetSpace(40) // eight ppl models in a ppl.Space
	if err != nil {
		log.Fatal(err)
	}
	res, err := trj.Run(context.Background(), space, &trj.Settings{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	k, _ := space.Index("100")
	fmt.Printf("π(x₁ only | y): chains %.2f, bridge %.2f\n", res.Chain[k].P, res.Bridge.Normalized[k])
	// Output:
	// π(x₁ only | y): chains 0.68, bridge 0.68
}
