package main

import (
	"context"

	"github.com/trjgo/trj/flows"
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
	o.override(configFields{
		seed: &cfg.Seed, progress: &cfg.Progress,
		chains: &cfg.Chains, steps: &cfg.Steps, trainDraws: &cfg.PilotDraws,
		bridgeReps: &cfg.BridgeReplicates, scatterSources: &cfg.ScatterSources,
		train: []*flows.TrainOptions{&cfg.Train},
	})
	var err error
	if cfg.DataPath, err = o.dataPath(datasets.ExchangeRates); err != nil {
		return nil, nil, err
	}
	res, err := factor.Run(ctx, cfg)
	if res == nil {
		return nil, nil, err
	}
	return withFigures(res.Result, res.WriteFigures, o.out, err)
}

// runRobustVS is the robust variable-selection experiment of the paper's
// §5.1.
func runRobustVS(ctx context.Context, o runOptions) (*experiment.Result, []string, error) {
	cfg := robustvs.DefaultConfig()
	if o.paper {
		cfg = robustvs.PaperConfig()
	}
	o.override(configFields{
		seed: &cfg.Seed, progress: &cfg.Progress,
		trainDraws: &cfg.PilotDraws, bridgeReps: &cfg.BridgeReplicates, scatterSources: &cfg.ScatterSources,
		train: []*flows.TrainOptions{&cfg.Train, &cfg.CTrain},
	})
	var err error
	if cfg.DataPath, err = o.dataPath(datasets.RobustRegression); err != nil {
		return nil, nil, err
	}
	res, err := robustvs.Run(ctx, cfg)
	if res == nil {
		return nil, nil, err
	}
	return withFigures(res.Result, res.WriteFigures, o.out, err)
}

// dataPath is the data file an experiment reads for its data set file:
// -data when given, else file in $TRJ_DATA when that is set, else "" for
// the copy embedded in the binary.
func (o runOptions) dataPath(file string) (string, error) {
	return resolveDataPath(o.data, file)
}
