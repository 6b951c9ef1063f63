package trj_test

import (
	"bytes"
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
	_ = res.String() // the table of model probabilities: fmt.Print(res)
	best, bestB := 0, 0
	for k := range res.Labels {
		if res.Chain[k].P > res.Chain[best].P {
			best = k
		}
		if res.Bridge.Normalized[k] > res.Bridge.Normalized[bestB] {
			bestB = k
		}
	}
	fmt.Printf("most probable: %s (chains), %s (bridge)\n", res.Labels[best], res.Labels[bestB])
	// The table's digits depend on the platform's floating point; the
	// ranking does not.

	// Output:
	// most probable: 100 (chains), 100 (bridge)
}

// A run with another family of proposals, whose pilots and fitted flows a
// second run reuses: here RQMA flows for every model, saved, then loaded
// for a run with another seed for its chains.
func ExampleRunFitted() {
	space, _, err := subsetSpace(40)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	_, fitted, err := trj.RunFitted(ctx, space, &trj.Settings{Seed: 1, Proposals: &trj.RQMATransports{}})
	if err != nil {
		log.Fatal(err)
	}
	var set bytes.Buffer
	if err := fitted.Save(&set); err != nil {
		log.Fatal(err)
	}
	res, err := trj.Run(ctx, space, &trj.Settings{Seed: 2,
		Pilot:     trj.PilotSettings{From: fitted},
		Proposals: &trj.LoadedTransports{From: &set}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res)
}
