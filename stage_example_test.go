package trj_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/shard"
)

// A run split into stages, as separate jobs of a batch scheduler would run
// them: the pilots in two blocks of models, the fit once, the chains in
// two shards; merged, they are the whole run's result.
func ExampleRunStage() {
	space, _, err := subsetSpace(40) // eight models
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "stages") // a folder every job sees
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	settings := &trj.Settings{Seed: 1,
		Pilot:  trj.PilotSettings{Method: trj.NUTSPilots{Warmup: 300, Draws: 500}},
		Chains: trj.ChainSettings{Steps: 1000, MaxSteps: 1000}, // shards never extend
	}

	for i := 1; i <= 2; i++ { // job i of a pilot array of 2
		models := shard.Shard{Index: i, Count: 2}.Indices(space.NumModels())
		if _, _, err := trj.RunStage(ctx, space, settings, trj.StagePilots, dir, models); err != nil {
			log.Fatal(err)
		}
	}
	if _, _, err := trj.RunStage(ctx, space, settings, trj.StageFit, dir, nil); err != nil {
		log.Fatal(err)
	}
	var parts []*trj.Result
	for i := 1; i <= 2; i++ { // job i of a chain array of 2
		chains := shard.Shard{Index: i, Count: 2}.Indices(8)
		res, _, err := trj.RunStage(ctx, space, settings, trj.StageChains, dir, chains)
		if err != nil {
			log.Fatal(err)
		}
		parts = append(parts, res) // written with res.WriteJSON by a real job
	}
	merged, err := trj.Merge(parts...)
	if err != nil {
		log.Fatal(err)
	}
	whole, err := trj.Run(ctx, space, settings)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("chains", merged.NumChains, "steps", merged.Steps)
	fmt.Println("same as the whole run:", merged.Chain[1] == whole.Chain[1] && merged.Bridge.Normalized[1] == whole.Bridge.Normalized[1])
	// Output:
	// chains 8 steps 8000
	// same as the whole run: true
}
