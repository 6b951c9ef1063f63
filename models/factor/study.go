package factor

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/figures"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
)

// StudyConfig sizes the paper's study of the bridge estimator's spread
// (§4.3, the violin figure): Pairs independent training/evaluation pilot
// pairs, each drawn by SMC with Config.PilotDraws particles per model and
// set, every proposal type fitted to the pair's training set, and
// Config.BridgeReplicates Bartolucci bridge estimates per proposal type
// from one jump proposal per evaluation draw. Unlike Run, whose replicates
// share one pair, the study's spread includes the pilot's variability.
// Config's chain and scatter sizes do not apply.
//
// The pairs are independent (pair p draws every stream from PairSeed(p)),
// so they can run as separate processes (shards) and be merged with
// MergeStudy.
type StudyConfig struct {
	Config
	// Pairs is the number of training/evaluation pairs (10).
	Pairs int
}

// DefaultStudyConfig returns the paper's study at n pilot draws per model
// and set (the paper used 2000 and 16000): 10 pairs × 100 bridge
// estimates, with DefaultConfig's pilot and flow settings.
func DefaultStudyConfig(n int) StudyConfig {
	c := DefaultConfig()
	c.PilotDraws = n
	c.Chains, c.Steps = 0, 0
	c.BridgeReplicates = 100
	c.ScatterSources = 0
	return StudyConfig{Config: c, Pairs: 10}
}

// Validate reports a study that cannot run.
func (c *StudyConfig) Validate() error {
	switch {
	case c.Pairs < 1:
		return fmt.Errorf("factor: %d training/evaluation pairs, need at least 1", c.Pairs)
	case c.BridgeReplicates < 1:
		return fmt.Errorf("factor: %d bridge replicates per pair, need at least 1", c.BridgeReplicates)
	}
	return c.Config.Validate()
}

// PairSeed returns the seed from which pair p (1-based) derives every
// random stream: its pilots, flow training and bridge replicates.
func (c *StudyConfig) PairSeed(p int) uint64 {
	return experiment.Stream(c.Seed, "study-pair", p).Uint64()
}

// Settings returns everything that determines the study's result, as
// JSON-friendly values: the sizes, the seed, the pilot, flow and training
// settings and the SHA-256 of the data file's bytes. Two runs whose
// Settings are equal compute the same pairs, so shards are merged only
// when their Settings agree. Settings that only change the speed (SMC
// workers, progress) are left out.
func (c *StudyConfig) Settings() (map[string]any, error) {
	data, err := dataBytes(c.DataPath)
	if err != nil {
		return nil, fmt.Errorf("factor: %w", err)
	}
	sum := sha256.Sum256(data)
	t, s := c.Train, c.SMC
	return map[string]any{
		"model":              "factor analysis, 2 and 3 factors",
		"data_sha256":        hex.EncodeToString(sum[:]),
		"seed":               c.Seed,
		"pairs":              c.Pairs,
		"pilot_draws":        c.PilotDraws,
		"bridge_replicates":  c.BridgeReplicates,
		"proposals":          c.Proposals,
		"rejuvenate_steps":   c.RejuvenateSteps,
		"smc_ess_fraction":   s.ESSFraction,
		"smc_resample":       s.ResampleThreshold,
		"smc_move":           cmp.Or[kernels.SMCMove](s.Move, kernels.SMCEigenRWM{}).String(),
		"smc_pilot_moves":    s.PilotMoves,
		"smc_move_tolerance": s.MoveTolerance,
		"smc_max_moves":      s.MaxMoves,
		"smc_target_accept":  s.TargetAccept,
		"smc_max_steps":      s.MaxSteps,
		"rqma":               []any{c.RQMA.Layers, c.RQMA.Bins, c.RQMA.HiddenPerDim, c.RQMA.SigmoidScale},
		"train": map[string]any{
			"iterations": t.Iterations, "learning_rate": t.LearningRate, "decay1": t.Decay1,
			"decay_steps": t.DecaySteps, "decay2": t.Decay2, "batch": t.BatchSize, "double_at": t.DoubleAt,
			"validation_fraction": t.ValidationFraction, "validate_every": t.ValidateEvery,
			"stop_window": t.StopWindow, "min_improvement": t.MinImprovement, "weighted": t.Weights != nil,
			"workers": t.Workers,
		},
	}, nil
}

// PairResult is the outcome of one training/evaluation pair of the study.
type PairResult struct {
	// Pair is the pair's number, 1 … StudyConfig.Pairs; Seed its
	// PairSeed.
	Pair int    `json:"pair"`
	Seed uint64 `json:"seed"`
	// ModeWeight is the fraction of the 2-factor training and evaluation
	// draws in the mode with positive factor-2 loadings.
	ModeWeight [2]experiment.Float `json:"mode_weight"`
	// LogEvidence[set][k] is the SMC evidence estimate of model k's
	// training (set 0) and evaluation (set 1) pilot.
	LogEvidence [2][]experiment.Float `json:"log_evidence"`
	// Proposals holds each proposal type's bridge estimates.
	Proposals map[string]*PairProposal `json:"proposals"`
	// Seconds holds the wall time of the pilots ("pilot") and of the
	// whole pair ("total").
	Seconds map[string]experiment.Float `json:"seconds"`
}

// PairProposal is one proposal type's part of a pair.
type PairProposal struct {
	// Bridge holds the pair's bridge estimates.
	Bridge *experiment.BridgeSummary `json:"bridge"`
	// TrainIterations is the Adam steps each model's flow took (RQMA).
	TrainIterations []int `json:"train_iterations,omitempty"`
	// Seconds holds the wall times of fitting ("train") and of the bridge
	// replicates ("bridge").
	Seconds map[string]experiment.Float `json:"seconds"`
}

// Estimates returns the pair's normalised estimates of π(2 factors), one
// per replicate (NaN for a failed one).
func (p *PairProposal) Estimates() []float64 {
	out := make([]float64, len(p.Bridge.NormReplicates))
	for i, r := range p.Bridge.NormReplicates {
		v, ok := r["2"]
		if !ok {
			v = experiment.Float(math.NaN())
		}
		out[i] = float64(v)
	}
	return out
}

// RunPair runs pair p (1-based) of the study on the observations y.
func RunPair(ctx context.Context, cfg StudyConfig, y *mat.Dense, p int) (*PairResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if p < 1 || p > cfg.Pairs {
		return nil, fmt.Errorf("factor: pair %d of %d", p, cfg.Pairs)
	}
	start := time.Now()
	_, dim := y.Dims()
	space, err := NewSpace(y)
	if err != nil {
		return nil, err
	}
	seed := cfg.PairSeed(p)
	labels := []string{"2", "3"}
	res := &PairResult{Pair: p, Seed: seed, Proposals: map[string]*PairProposal{}, Seconds: map[string]experiment.Float{}}
	bar := cfg.Progress.Stage(fmt.Sprintf("pair %d: SMC pilots", p), 2*len(factors))
	pilot, err := RunPilot(ctx, y, cfg.PilotDraws, cfg.SMC, cfg.RejuvenateSteps, seed, bar)
	bar.Done()
	if err != nil {
		return nil, err
	}
	res.Seconds["pilot"] = experiment.Float(time.Since(start).Seconds())
	for set := range 2 {
		res.ModeWeight[set] = experiment.Float(pilot.ModeWeight[set])
		for _, z := range pilot.LogZ[set] {
			res.LogEvidence[set] = append(res.LogEvidence[set], experiment.Float(z))
		}
	}
	fit := cfg.Config
	fit.Seed = seed
	jump := kernels.UniformJumps(len(factors))
	for _, kind := range cfg.Proposals {
		pp := &PairProposal{Seconds: map[string]experiment.Float{}}
		t0 := time.Now()
		var bar *experiment.Bar
		if kind == experiment.ProposalRQMA {
			bar = cfg.Progress.Stage(fmt.Sprintf("pair %d: train %s", p, kind), len(factors)*cfg.Train.Iterations)
		}
		set, err := FitProposals(ctx, kind, pilot.Train, dim, fit, bar)
		bar.Done()
		if err != nil {
			return nil, fmt.Errorf("pair %d: %w", p, err)
		}
		for _, r := range set.Reports {
			pp.TrainIterations = append(pp.TrainIterations, r.Iterations)
		}
		pp.Seconds["train"] = experiment.Float(time.Since(t0).Seconds())
		t0 = time.Now()
		bar = cfg.Progress.Stage(fmt.Sprintf("pair %d: bridge %s", p, kind), cfg.BridgeReplicates)
		ests, err := experiment.BridgeReplicates(ctx, seed, "bridge-"+kind, cfg.BridgeReplicates, jump, nil,
			func(ctx context.Context, rep int, rng *rand.Rand) ([]kernels.JumpRecord, error) {
				kern, err := set.New(space.Clone(), nil)
				if err != nil {
					return nil, err
				}
				recs, err := kernels.EvaluationJumps(rng, kern, pilot.Eval)
				bar.Add(1)
				return recs, err
			})
		bar.Done()
		if err != nil {
			return nil, fmt.Errorf("pair %d: %w", p, err)
		}
		pp.Bridge = experiment.SummarizeBridge(ests, labels)
		pp.Bridge.EvalDraws = cfg.PilotDraws
		pp.Seconds["bridge"] = experiment.Float(time.Since(t0).Seconds())
		res.Proposals[kind] = pp
	}
	res.Seconds["total"] = experiment.Float(time.Since(start).Seconds())
	return res, nil
}

// StudySummary summarises one proposal type's estimates of π(2 factors)
// over all pairs of a study.
type StudySummary struct {
	// Estimates counts the finite estimates; Failed the replicates left
	// undefined for want of jumps.
	Estimates int `json:"estimates"`
	Failed    int `json:"failed"`
	// Mean and SD are over all finite estimates; RMSE is their root mean
	// squared error about Truth2.
	Mean experiment.Float `json:"mean"`
	SD   experiment.Float `json:"sd"`
	RMSE experiment.Float `json:"rmse"`
	// BetweenPairSD is the standard deviation of the pairs' mean
	// estimates, WithinPairSD the root mean of the pairs' variances: the
	// pilot's and the evaluation proposals' shares of the spread.
	BetweenPairSD experiment.Float `json:"between_pair_sd"`
	WithinPairSD  experiment.Float `json:"within_pair_sd"`
	// Q05, Median and Q95 are empirical quantiles of the estimates.
	Q05    experiment.Float `json:"q05"`
	Median experiment.Float `json:"median"`
	Q95    experiment.Float `json:"q95"`
	// MeanAcceptance is the mean over pairs of the evaluation proposals'
	// mean acceptance probability.
	MeanAcceptance experiment.Float `json:"mean_acceptance"`
	// PairMeans holds each pair's mean estimate, in pair order.
	PairMeans []experiment.Float `json:"pair_means"`
}

// StudyResult is the merged study.
type StudyResult struct {
	// PilotDraws and Replicates are N and the estimates per pair.
	PilotDraws int `json:"pilot_draws"`
	Replicates int `json:"replicates"`
	// Pairs holds every pair's result in pair order.
	Pairs []*PairResult `json:"pairs"`
	// Order lists the proposal types as they ran; Summary summarises each.
	Order   []string                 `json:"order"`
	Summary map[string]*StudySummary `json:"summary"`
}

// MergeStudy combines the results of pairs 1 … total, given in any order
// (typically from separate shard processes), into the study's result. A
// missing or repeated pair, or pairs that ran different proposal types,
// is an error.
func MergeStudy(pairs []*PairResult, total int) (*StudyResult, error) {
	if total < 1 {
		return nil, fmt.Errorf("factor: merging %d pairs", total)
	}
	byPair := make([]*PairResult, total)
	for _, p := range pairs {
		switch {
		case p == nil:
			return nil, errors.New("factor: nil pair result")
		case p.Pair < 1 || p.Pair > total:
			return nil, fmt.Errorf("factor: pair %d of a study of %d pairs", p.Pair, total)
		case byPair[p.Pair-1] != nil:
			return nil, fmt.Errorf("factor: pair %d given twice", p.Pair)
		}
		byPair[p.Pair-1] = p
	}
	var missing []string
	for i, p := range byPair {
		if p == nil {
			missing = append(missing, fmt.Sprint(i+1))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("factor: pairs %s of %d missing", strings.Join(missing, ", "), total)
	}
	first := byPair[0]
	res := &StudyResult{Pairs: byPair, Summary: map[string]*StudySummary{}}
	for kind := range first.Proposals {
		res.Order = append(res.Order, kind)
	}
	// The experiment's order, then any others by name.
	known := ProposalTypes()
	sort.Slice(res.Order, func(i, j int) bool {
		a, b := slices.Index(known, res.Order[i]), slices.Index(known, res.Order[j])
		if a < 0 || b < 0 || a == b {
			return (a >= 0 && b < 0) || (a == b && res.Order[i] < res.Order[j])
		}
		return a < b
	})
	for _, p := range byPair {
		if len(p.Proposals) != len(first.Proposals) {
			return nil, fmt.Errorf("factor: pair %d ran %d proposal types, pair %d ran %d", p.Pair, len(p.Proposals), first.Pair, len(first.Proposals))
		}
		for _, kind := range res.Order {
			pp, ok := p.Proposals[kind]
			if !ok || pp == nil || pp.Bridge == nil {
				return nil, fmt.Errorf("factor: pair %d lacks the %s estimates", p.Pair, kind)
			}
			if pp.Bridge.EvalDraws != first.Proposals[kind].Bridge.EvalDraws || pp.Bridge.Replicates != first.Proposals[kind].Bridge.Replicates {
				return nil, fmt.Errorf("factor: pair %d has %d estimates of %d draws, pair %d %d of %d", p.Pair,
					pp.Bridge.Replicates, pp.Bridge.EvalDraws, first.Pair, first.Proposals[kind].Bridge.Replicates, first.Proposals[kind].Bridge.EvalDraws)
			}
		}
	}
	b0 := first.Proposals[res.Order[0]].Bridge
	res.PilotDraws, res.Replicates = b0.EvalDraws, b0.Replicates
	for _, kind := range res.Order {
		res.Summary[kind] = summarizeStudy(byPair, kind)
	}
	return res, nil
}

// summarizeStudy summarises proposal type kind over the pairs.
func summarizeStudy(pairs []*PairResult, kind string) *StudySummary {
	s := &StudySummary{}
	var all, means []float64
	var within, acc float64
	nWithin, nAcc := 0, 0
	for _, p := range pairs {
		pp := p.Proposals[kind]
		s.Failed += pp.Bridge.Failed
		var fin []float64
		for _, v := range pp.Estimates() {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				fin = append(fin, v)
			}
		}
		all = append(all, fin...)
		m := math.NaN()
		if len(fin) > 0 {
			m = stat.Mean(fin, nil)
			means = append(means, m)
		}
		s.PairMeans = append(s.PairMeans, experiment.Float(m))
		if len(fin) > 1 {
			within += stat.Variance(fin, nil)
			nWithin++
		}
		if a := float64(pp.Bridge.MeanAcceptance); !math.IsNaN(a) {
			acc += a
			nAcc++
		}
	}
	nan := experiment.Float(math.NaN())
	s.Estimates = len(all)
	s.Mean, s.SD, s.RMSE, s.Q05, s.Median, s.Q95 = nan, nan, nan, nan, nan, nan
	s.BetweenPairSD, s.WithinPairSD, s.MeanAcceptance = nan, nan, nan
	if len(all) > 0 {
		s.Mean = experiment.Float(stat.Mean(all, nil))
		se := 0.0
		for _, v := range all {
			se += (v - Truth2) * (v - Truth2)
		}
		s.RMSE = experiment.Float(math.Sqrt(se / float64(len(all))))
		sorted := slices.Clone(all)
		slices.Sort(sorted)
		s.Q05 = experiment.Float(stat.Quantile(0.05, stat.Empirical, sorted, nil))
		s.Median = experiment.Float(stat.Quantile(0.5, stat.Empirical, sorted, nil))
		s.Q95 = experiment.Float(stat.Quantile(0.95, stat.Empirical, sorted, nil))
	}
	if len(all) > 1 {
		s.SD = experiment.Float(stat.StdDev(all, nil))
	}
	if len(means) > 1 {
		s.BetweenPairSD = experiment.Float(stat.StdDev(means, nil))
	}
	if nWithin > 0 {
		s.WithinPairSD = experiment.Float(math.Sqrt(within / float64(nWithin)))
	}
	if nAcc > 0 {
		s.MeanAcceptance = experiment.Float(acc / float64(nAcc))
	}
	return s
}

// WriteTable prints the study's summary per proposal type, then each
// pair's mean estimates, pilot mode weights and wall time.
func (r *StudyResult) WriteTable(w io.Writer) error {
	f := func(v experiment.Float) string {
		if math.IsNaN(float64(v)) {
			return "-"
		}
		return fmt.Sprintf("%.4f", float64(v))
	}
	if _, err := fmt.Fprintf(w, "factor-analysis study: π̂(2 factors) by the bridge estimator, %d training/evaluation pairs × %d estimates, N = %d draws per model and set; truth %.2f\n",
		len(r.Pairs), r.Replicates, r.PilotDraws, Truth2); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "proposal\tmean\tsd\tbetween-pair sd\twithin-pair sd\t5%\tmedian\t95%\tRMSE\tfailed\tmean α\t")
	for _, kind := range r.Order {
		s := r.Summary[kind]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.3f\t\n", kind, f(s.Mean), f(s.SD), f(s.BetweenPairSD), f(s.WithinPairSD),
			f(s.Q05), f(s.Median), f(s.Q95), f(s.RMSE), s.Failed, float64(s.MeanAcceptance))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "\nper pair: mean π̂(2 factors) by proposal type, 2-factor pilot mode weight (training, evaluation), wall time"); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"pair"}
	head = append(head, r.Order...)
	head = append(head, "mode weight", "seconds")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for i, p := range r.Pairs {
		row := []string{fmt.Sprint(p.Pair)}
		for _, kind := range r.Order {
			row = append(row, f(r.Summary[kind].PairMeans[i]))
		}
		row = append(row, fmt.Sprintf("%.2f, %.2f", float64(p.ModeWeight[0]), float64(p.ModeWeight[1])),
			fmt.Sprintf("%.0f", float64(p.Seconds["total"])))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

// WriteFigures writes the study's figures into dir, each as PNG and SVG,
// and returns the files written: factor_study_bridge (one violin per
// proposal type over every pair's estimates, the paper's figure) and
// factor_study_pairs (one panel per proposal type, one violin per pair).
func (r *StudyResult) WriteFigures(dir string) ([]string, error) {
	w, err := experiment.NewFigureWriter(dir)
	if err != nil {
		return nil, err
	}
	var groups []figures.Group
	var panels []figures.ViolinPanel
	for _, kind := range r.Order {
		var all []float64
		panel := figures.ViolinPanel{Title: figureNames.Name(kind), Truth: Truth2}
		for _, p := range r.Pairs {
			v := p.Proposals[kind].Estimates()
			all = append(all, v...)
			if experiment.AnyFinite(v) {
				panel.Groups = append(panel.Groups, figures.Group{Name: fmt.Sprint(p.Pair), Values: v})
			}
		}
		if experiment.AnyFinite(all) {
			groups = append(groups, figures.Group{Name: figureNames.Name(kind), Values: all})
			panels = append(panels, panel)
		}
	}
	if len(groups) == 0 {
		return nil, errors.New("factor: no finite bridge estimates to draw")
	}
	title := fmt.Sprintf("Factor study: %d pairs × %d, N = %d", len(r.Pairs), r.Replicates, r.PilotDraws)
	w.Write("factor_study_bridge", func(path string) error {
		_, err := figures.Violins(path, title, groups, Truth2, figures.WithYLabel("π̂(k=2)"))
		return err
	})
	w.Write("factor_study_pairs", func(path string) error {
		_, err := figures.ViolinPanels(path, title, panels, figures.WithColumns(1),
			figures.WithXLabel("training/evaluation pair"), figures.WithYLabel("π̂(k=2)"))
		return err
	})
	return w.Files(), w.Err()
}
