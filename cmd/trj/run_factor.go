package main

import (
	"context"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/models/factor"
	"github.com/trjgo/trj/models/robustvs"
)

// runFactor is the factor-analysis experiment of the paper's §4.3.
func runFactor(ctx context.Context, o runOptions) (*experiment.Result, []string, error) {
	cfg := factor.DefaultConfig()
	if o.paper {
		cfg = factor.PaperConfig()
	}
	cfg.Seed = o.seed
	cfg.Progress = o.progress
	p, err := o.dataPath(datasets.ExchangeRates)
	if err != nil {
		return nil, nil, err
	}
	cfg.DataPath = p
	setPositive(&cfg.Chains, o.chains)
	setPositive(&cfg.Steps, o.steps)
	setPositive(&cfg.PilotDraws, o.trainDraws)
	setPositive(&cfg.BridgeReplicates, o.bridgeReps)
	setPositive(&cfg.ScatterSources, o.scatterSources)
	if o.trainIters > 0 {
		cfg.Train.Iterations = o.trainIters
		cfg.Train.DoubleAt = nil
	}
	res, err := factor.Run(ctx, cfg)
	if err != nil {
		if res != nil {
			return finishedPart(res.Result, err)
		}
		return nil, nil, err
	}
	files, err := res.WriteFigures(o.out)
	return res.Result, files, err
}

// runRobustVS is the robust variable-selection experiment of the paper's
// §5.1.
func runRobustVS(ctx context.Context, o runOptions) (*experiment.Result, []string, error) {
	cfg := robustvs.DefaultConfig()
	if o.paper {
		cfg = robustvs.PaperConfig()
	}
	cfg.Seed = o.seed
	cfg.Progress = o.progress
	p, err := o.dataPath(datasets.RobustRegression)
	if err != nil {
		return nil, nil, err
	}
	cfg.DataPath = p
	setPositive(&cfg.PilotDraws, o.trainDraws)
	setPositive(&cfg.BridgeReplicates, o.bridgeReps)
	setPositive(&cfg.ScatterSources, o.scatterSources)
	if o.trainIters > 0 {
		for _, t := range []*int{&cfg.Train.Iterations, &cfg.CTrain.Iterations} {
			*t = o.trainIters
		}
		cfg.Train.DoubleAt, cfg.CTrain.DoubleAt = nil, nil
	}
	res, err := robustvs.Run(ctx, cfg)
	if err != nil {
		if res != nil {
			return finishedPart(res.Result, err)
		}
		return nil, nil, err
	}
	files, err := res.WriteFigures(o.out)
	return res.Result, files, err
}

// dataPath is the data file an experiment reads for its data set file:
// -data when given, else file in $TRJ_DATA when that is set, else "" for
// the copy embedded in the binary.
func (o runOptions) dataPath(file string) (string, error) {
	return resolveDataPath(o.data, file)
}
