package experiment_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
)

// Replicate chains run in parallel, each from its own stream, and are
// summarised into a Result. The "chain" here flips a biased coin for its
// model at every step.
func Example() {
	const chains, steps = 4, 5000
	runs := make([]*experiment.ChainRun, chains)
	err := experiment.Parallel(context.Background(), chains, func(ctx context.Context, c int) error {
		rng := experiment.Stream(1, "chains", c)
		step := func(rng *rand.Rand) (int, kernels.RJInfo) {
			if rng.Float64() < 0.75 {
				return 1, kernels.RJInfo{}
			}
			return 0, kernels.RJInfo{}
		}
		var err error
		runs[c], err = experiment.RunChain(ctx, rng, steps, 2, step, false, nil)
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := experiment.SummarizeChains(runs, []string{"1", "2"})
	res := experiment.NewResult("coin", 1, []string{"1", "2"})
	res.Add("exact", p)
	fmt.Printf("π̂(2) within 3 standard errors of 0.75: %v\n", abs(float64(p.ModelProbabilities["2"])-0.75) < 3*float64(p.Stderr["2"]))
	_ = res.WriteTable(os.Stdout)
	// Output:
	// π̂(2) within 3 standard errors of 0.75: true
	// model probabilities: mean ± standard error over 4 chains of 5000 steps
	//   proposal             π(1)             π(2)  accept
	//      exact  0.2455 ± 0.0016  0.7546 ± 0.0016     NaN
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
