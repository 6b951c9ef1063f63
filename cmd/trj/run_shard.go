package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/models/sas"
)

// runKindSAS is the partial-file kind of "trj run sas -shard".
const runKindSAS = "run sas"

// shardableRuns are the experiments "trj run -shard" can split.
var shardableRuns = []string{"sas"}

// sasPart is the payload of a shard of "trj run sas": its chains and
// bridge replicates, numbered as in the whole run, and what the merged
// result takes from one shard (the stages every shard repeats).
type sasPart struct {
	// Result is the shard's own result: settings, truth and stage times.
	Result *experiment.Result `json:"result"`
	// Order lists the proposal types as they ran.
	Order []string `json:"order"`
	// EvalDraws is the evaluation-set size of each bridge replicate.
	EvalDraws int `json:"eval_draws"`
	// Chains and Bridge hold, by proposal type, the shard's chains and
	// bridge estimates.
	Chains map[string][]indexedRun `json:"chains"`
	Bridge map[string][]indexedEst `json:"bridge"`
	// Truth is π(k=2); Source, Proposed and Background are the proposal
	// scatter, kept by the shard that runs chain 1.
	Truth      float64                `json:"truth"`
	Source     [][]float64            `json:"source,omitempty"`
	Proposed   map[string][][]float64 `json:"proposed,omitempty"`
	Background [][]float64            `json:"background,omitempty"`
}

// indexedRun is chain Index (0-based) of the whole run.
type indexedRun struct {
	Index int                  `json:"index"`
	Run   *experiment.ChainRun `json:"run"`
}

// indexedEst is bridge replicate Index (0-based) of the whole run, with
// what experiment.SummarizeBridge reads of a kernels.BridgeEstimate
// (non-finite values written as null).
type indexedEst struct {
	Index      int                  `json:"index"`
	Count      [][]int              `json:"count"`
	MeanAccept [][]experiment.Float `json:"mean_accept"`
	Raw        []experiment.Float   `json:"raw"`
	Normalized []experiment.Float   `json:"normalized"`
}

func toFloats(v []float64) []experiment.Float {
	if v == nil {
		return nil
	}
	out := make([]experiment.Float, len(v))
	for i, x := range v {
		out[i] = experiment.Float(x)
	}
	return out
}

func fromFloats(v []experiment.Float) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// sasSettings returns what determines a SAS run's result, for the
// fingerprint of its shards.
func sasSettings(cfg sas.ExperimentConfig) map[string]any {
	t := cfg.Train
	return map[string]any{
		"experiment": "sas", "seed": cfg.Seed, "proposals": cfg.Proposals, "train_draws": cfg.TrainDraws,
		"chains": cfg.Chains, "steps": cfg.Steps, "jump": cfg.Jump, "rw_scale": cfg.RWScale,
		"bridge_replicates": cfg.BridgeReplicates, "eval_draws": cfg.EvalDraws,
		"rqma":    []any{cfg.RQMA.Layers, cfg.RQMA.Bins, cfg.RQMA.HiddenPerDim, cfg.RQMA.SigmoidScale},
		"scatter": []int{cfg.ScatterSources, cfg.ScatterAux},
		"train": map[string]any{
			"iterations": t.Iterations, "learning_rate": t.LearningRate, "decay1": t.Decay1,
			"decay_steps": t.DecaySteps, "decay2": t.Decay2, "batch": t.BatchSize, "double_at": t.DoubleAt,
			"validation_fraction": t.ValidationFraction, "validate_every": t.ValidateEvery,
			"stop_window": t.StopWindow, "min_improvement": t.MinImprovement, "workers": t.Workers,
		},
	}
}

// runSASShard runs shard o.sh of "trj run sas": the pilot and flows in
// full, its block of the chains and of the bridge replicates, and writes
// them as a partial result file for trj merge.
func runSASShard(ctx context.Context, o runOptions, stderr io.Writer) error {
	cfg := sasConfig(o)
	if err := o.sh.Check(cfg.Chains, "chains"); err != nil {
		return err
	}
	chains, reps := o.sh.Indices(cfg.Chains), o.sh.Indices(cfg.BridgeReplicates)
	settings := sasSettings(cfg)
	cfg.ChainIndices, cfg.ReplicateIndices = chains, reps
	first := chains[0] == 0
	if !first {
		cfg.ScatterSources = 0 // the scatter is kept by the shard of chain 1
	}
	start := time.Now()
	res, err := sas.Paper().RunExperiment(ctx, cfg)
	if err != nil {
		return err
	}
	part := sasPart{
		Result: res.Result, Order: res.Order, EvalDraws: cfg.EvalDraws, Truth: res.Truth,
		Chains: map[string][]indexedRun{}, Bridge: map[string][]indexedEst{},
	}
	if first {
		part.Source, part.Proposed, part.Background = res.Source, res.Proposed, res.Background
	}
	for kind, runs := range res.Runs {
		for i, r := range runs {
			part.Chains[kind] = append(part.Chains[kind], indexedRun{Index: chains[i], Run: r})
		}
	}
	for kind, ests := range res.Estimates {
		for i, e := range ests {
			ie := indexedEst{Index: reps[i], Count: e.Count, Raw: toFloats(e.Raw), Normalized: toFloats(e.Normalized)}
			for _, row := range e.MeanAccept {
				ie.MeanAccept = append(ie.MeanAccept, toFloats(row))
			}
			part.Bridge[kind] = append(part.Bridge[kind], ie)
		}
	}
	// Items: chain c is item c+1, bridge replicate r item Chains+r+1.
	var items []int
	for _, c := range chains {
		items = append(items, c+1)
	}
	for _, r := range reps {
		items = append(items, cfg.Chains+r+1)
	}
	p, err := newPartial(runKindSAS, settings, o.sh, items, cfg.Chains+cfg.BridgeReplicates, time.Since(start).Seconds(), part)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.partial), 0o755); err != nil {
		return err
	}
	if err := p.write(o.partial); err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "shard %s: chains %d-%d of %d, %d of %d bridge replicates in %.1f s; wrote %s\n",
			o.sh, chains[0]+1, chains[len(chains)-1]+1, cfg.Chains, len(reps), cfg.BridgeReplicates, p.Seconds, o.partial)
	}
	return nil
}

// mergeSAS merges the shards of "trj run sas" into the result of the whole
// run: each proposal type's chains and bridge replicates are summarised
// again, in the whole run's order; the stage times are those of the shard
// of chain 1.
func mergeSAS(parts []*partialFile, dir, jsonPath string, stdout io.Writer) ([]string, error) {
	var base *sasPart
	runs := map[string][]indexedRun{}
	ests := map[string][]indexedEst{}
	for _, p := range parts {
		var sp sasPart
		if err := json.Unmarshal(p.Payload, &sp); err != nil {
			return nil, fmt.Errorf("shard %s: %w", p.Shard, err)
		}
		if sp.Result == nil {
			return nil, fmt.Errorf("shard %s: no result", p.Shard)
		}
		for k, v := range sp.Chains {
			runs[k] = append(runs[k], v...)
			if slices.ContainsFunc(v, func(r indexedRun) bool { return r.Index == 0 }) {
				base = &sp
			}
		}
		for k, v := range sp.Bridge {
			ests[k] = append(ests[k], v...)
		}
	}
	if base == nil {
		return nil, errors.New("no shard holds chain 1")
	}
	labels := base.Result.Models
	last := len(labels) - 1
	merged := experiment.NewResult(base.Result.Experiment, base.Result.Seed, labels)
	merged.Truth, merged.Settings, merged.Seconds = base.Result.Truth, base.Result.Settings, base.Result.Seconds
	fig := &sas.ExperimentResult{
		Result: merged, Running: map[string][][]float64{}, Bridge: map[string][]float64{},
		Source: base.Source, Proposed: base.Proposed, Background: base.Background, Truth: base.Truth,
	}
	if fig.Proposed == nil {
		fig.Proposed = map[string][][]float64{}
	}
	for _, kind := range base.Order {
		rs := runs[kind]
		slices.SortFunc(rs, func(a, b indexedRun) int { return a.Index - b.Index })
		var cr []*experiment.ChainRun
		for _, r := range rs {
			if r.Run == nil {
				return nil, fmt.Errorf("%s chain %d: no record", kind, r.Index+1)
			}
			cr = append(cr, r.Run)
			fig.Running[kind] = append(fig.Running[kind], r.Run.Running(last))
		}
		p, err := experiment.SummarizeChains(cr, labels)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		if es := ests[kind]; len(es) > 0 {
			slices.SortFunc(es, func(a, b indexedEst) int { return a.Index - b.Index })
			be := make([]kernels.BridgeEstimate, len(es))
			for i, e := range es {
				be[i] = kernels.BridgeEstimate{Count: e.Count, Raw: fromFloats(e.Raw), Normalized: fromFloats(e.Normalized)}
				for _, row := range e.MeanAccept {
					be[i].MeanAccept = append(be[i].MeanAccept, fromFloats(row))
				}
			}
			p.Bridge = experiment.SummarizeBridge(be, labels)
			p.Bridge.EvalDraws = base.EvalDraws
			fig.Bridge[kind] = p.Bridge.Values(last)
		}
		if bp, ok := base.Result.Proposals[kind]; ok {
			p.Seconds = bp.Seconds
		}
		merged.Add(kind, p)
	}
	if err := merged.WriteTable(stdout); err != nil {
		return nil, err
	}
	files, err := fig.WriteFigures(dir)
	if err != nil {
		return files, err
	}
	if jsonPath != "" {
		if err := merged.WriteJSONFile(jsonPath); err != nil {
			return files, err
		}
		files = append(files, jsonPath)
	}
	return files, nil
}
