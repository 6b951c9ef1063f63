package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/internal/jsonfloat"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/models/sas"
)

// runKindSAS is the partial-file kind of "trj run sas -shard".
const runKindSAS = "run sas"

// shardableRuns are the experiments "trj run -shard" can split.
var shardableRuns = []string{"sas"}

// sasPart is the payload of a shard of "trj run sas": its trj.Run result
// per proposal type (with its block of the chains) and what the merged
// result takes from one shard (the stages every shard repeats).
type sasPart struct {
	// Result is the shard's own result: settings, truth and stage times.
	Result *experiment.Result `json:"result"`
	// Order lists the proposal types as they ran.
	Order []string `json:"order"`
	// Runs holds, by proposal type, the shard's trj.Run result.
	Runs map[string]*trj.Result `json:"runs"`
	// Truth is π(k=2); Bridge the bridge estimate of π(k=2) of each
	// evaluation set by proposal type; Source, Proposed and Background
	// the proposal scatter, kept by the shard that runs chain 1.
	// MarshalJSON writes them (sasFloats).
	Truth      float64                `json:"-"`
	Bridge     map[string][]float64   `json:"-"`
	Source     [][]float64            `json:"-"`
	Proposed   map[string][][]float64 `json:"-"`
	Background [][]float64            `json:"-"`
}

// sasFloats are sasPart's float fields in trj's JSON convention: a value
// that is not finite (the bridge estimate of a failed evaluation set is
// NaN) is written as a string, so that it never fails the shard's write.
type sasFloats struct {
	Truth      jsonfloat.Float             `json:"truth"`
	Bridge     map[string]jsonfloat.Slice  `json:"bridge,omitempty"`
	Source     jsonfloat.Matrix            `json:"source,omitempty"`
	Proposed   map[string]jsonfloat.Matrix `json:"proposed,omitempty"`
	Background jsonfloat.Matrix            `json:"background,omitempty"`
}

// MarshalJSON writes p in trj's JSON convention.
func (p sasPart) MarshalJSON() ([]byte, error) {
	type plain sasPart
	return json.Marshal(struct {
		plain
		sasFloats
	}{plain(p), sasFloats{jsonfloat.Float(p.Truth), convertMap[jsonfloat.Slice](p.Bridge), p.Source,
		convertMap[jsonfloat.Matrix](p.Proposed), p.Background}})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *sasPart) UnmarshalJSON(b []byte) error {
	type plain sasPart
	aux := struct {
		*plain
		sasFloats
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	f := aux.sasFloats
	p.Truth, p.Bridge, p.Source = float64(f.Truth), convertMap[[]float64](f.Bridge), f.Source
	p.Proposed, p.Background = convertMap[[][]float64](f.Proposed), f.Background
	return nil
}

// convertMap converts the values of m to U (nil for nil).
func convertMap[U ~[]E, T ~[]E, E any](m map[string]T) map[string]U {
	if m == nil {
		return nil
	}
	out := make(map[string]U, len(m))
	for k, v := range m {
		out[k] = U(v)
	}
	return out
}

// sasSettings returns what determines a SAS run's result, for the
// fingerprint of its shards.
func sasSettings(cfg sas.Config) map[string]any {
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

// runSASShard runs shard o.sh of "trj run sas": the pilot, flows and
// bridge in full (or, in the chains stage of a staged run, read from its
// files), its block of the chains, and writes them as a partial result
// file for trj merge. The pilot and fit stages go to runSASStage.
func runSASShard(ctx context.Context, o runOptions, stderr io.Writer) error {
	if o.stage == trj.StagePilots || o.stage == trj.StageFit {
		return runSASStage(ctx, o, stderr)
	}
	cfg := sasConfig(o)
	if err := o.sh.Check(cfg.Chains, "chains"); err != nil {
		return err
	}
	chains := o.sh.Indices(cfg.Chains)
	settings := sasSettings(cfg)
	cfg.Shard = chains
	first := chains[0] == 0
	if !first {
		cfg.ScatterSources = 0 // the scatter is kept by the shard of chain 1
	}
	start := time.Now()
	res, err := sas.Paper().Run(ctx, cfg)
	if err != nil && ctx.Err() != nil {
		return interruptedShard(o, settings, cfg.Chains, time.Since(start).Seconds(), res, stderr)
	}
	if err != nil {
		return err
	}
	part := sasPart{Result: res.Result, Order: res.Order, Runs: res.Runs, Truth: res.Truth}
	if first {
		part.Bridge, part.Source, part.Proposed, part.Background = res.Bridge, res.Source, res.Proposed, res.Background
	}
	// Items: chain c is item c+1.
	var items []int
	for _, c := range chains {
		items = append(items, c+1)
	}
	p, err := writePartial(o.partial, runKindSAS, settings, o.sh, items, cfg.Chains, time.Since(start).Seconds(), part)
	if err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "shard %s: chains %d-%d of %d in %.1f s; wrote %s\n",
			o.sh, chains[0]+1, chains[len(chains)-1]+1, cfg.Chains, p.Seconds, o.partial)
	}
	return nil
}

// interruptedShard keeps what a shard of "trj run sas" stopped by a
// signal finished (res, nil when the stop came before the first proposal
// type ended) in its partial file marked incomplete, which trj merge
// refuses, and returns errInterrupted.
func interruptedShard(o runOptions, settings map[string]any, total int, seconds float64, res *sas.Result, stderr io.Writer) error {
	var part sasPart
	if res != nil {
		part = sasPart{Result: res.Result, Order: res.Order, Runs: res.Runs, Truth: res.Truth}
	}
	p, err := newPartial(runKindSAS, settings, o.sh, nil, total, seconds, part)
	if err != nil {
		return err
	}
	p.Incomplete, p.Stopped = true, "interrupted"
	if err := savePartial(o.partial, p); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "interrupted: %s keeps the proposal types that finished (%s), marked incomplete; run the shard again for trj merge\n",
		o.partial, strings.Join(part.Order, ", "))
	return errInterrupted
}

// mergeSAS merges the shards of "trj run sas" into the result of the whole
// run (sas.Merge): each proposal type's chains are summarised
// again; the bridge, scatter and stage times are those of the shard of
// chain 1.
func mergeSAS(parts []*partialFile, dir, jsonPath string, stdout io.Writer) ([]string, error) {
	var res []*sas.Result
	for _, p := range parts {
		var sp sasPart
		if err := json.Unmarshal(p.Payload, &sp); err != nil {
			return nil, fmt.Errorf("shard %s: %w", p.Shard, err)
		}
		if sp.Result == nil {
			return nil, fmt.Errorf("shard %s: no result", p.Shard)
		}
		if len(sp.Runs) == 0 {
			return nil, errors.New("shard " + p.Shard + ": no runs")
		}
		sp.Result.Order = sp.Order
		res = append(res, &sas.Result{
			Result: sp.Result, Runs: sp.Runs, Truth: sp.Truth, Bridge: sp.Bridge,
			Source: sp.Source, Proposed: sp.Proposed, Background: sp.Background,
		})
	}
	merged, err := sas.Merge(res...)
	if err != nil {
		return nil, err
	}
	return writeMerged(merged, dir, jsonPath, stdout, merged.WriteJSONFile)
}
