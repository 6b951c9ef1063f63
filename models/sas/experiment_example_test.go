package sas_test

import (
	"context"
	"fmt"

	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/models/sas"
)

// The paper's §4.2 experiment at small sizes, without the RQMA flows (which
// take seconds to train): TRJ with exact and affine transports.
func ExampleTarget_Run() {
	cfg := sas.DefaultConfig()
	cfg.Proposals = []string{experiment.ProposalExact, experiment.ProposalAffine}
	cfg.TrainDraws, cfg.Steps, cfg.EvalDraws = 2000, 2000, 500
	res, err := sas.Paper().Run(context.Background(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range res.Order {
		p := res.Proposals[name]
		fmt.Printf("%-6s π̂(k=2) = %.2f, jumps accepted %.0f%%, bridge π̂(k=2) = %.2f\n",
			name, p.ModelProbabilities["2"], 100*p.AcceptanceRate, p.Bridge.Normalized["2"])
	}
	// Output:
	// exact  π̂(k=2) = 0.75, jumps accepted 100%, bridge π̂(k=2) = 0.75
	// affine π̂(k=2) = 0.77, jumps accepted 21%, bridge π̂(k=2) = 0.75
}
