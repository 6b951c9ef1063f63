package robustvs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/ppl"
)

// Config sizes the robust variable-selection experiment.
type Config struct {
	// DataPath is the CSV file (columns y, X.1 … X.4 used); "" means the
	// paper's data, embedded in package datasets.
	DataPath string
	// Seed determines every random stream of the run.
	Seed uint64
	// Proposals lists the proposal types to run, in order: a subset of
	// experiment.ProposalAffine, ProposalRQMA, ProposalCRQMA and
	// ProposalIndepAux.
	Proposals []string
	// PilotDraws is N, the number of SMC particles per model, spread over
	// 2·BridgeReplicates independent runs: half train the flows, half
	// evaluate them.
	PilotDraws int
	// SMC configures the pilot runs (Particles and Seed are set per run).
	SMC kernels.SMCSettings
	// BridgeReplicates is the number of independent evaluation groups
	// (SMC runs) per model; the bridge estimate's jackknife standard error
	// rests on them, and each gives an estimate of its own (the violins).
	BridgeReplicates int
	// RQMA and Train configure the individual RQMA flows, CRQMA and
	// CTrain the conditional one; the seeds are replaced per flow.
	RQMA, CRQMA   flows.RQMAConfig
	Train, CTrain flows.TrainOptions
	// ScatterSources evaluation draws of model (1,1,0,0) are proposed
	// into model (1,1,1,1) for the proposal figure; 0 skips it.
	ScatterSources int
	// Progress, if non-nil, shows a bar per stage.
	Progress *experiment.Progress
}

// ProposalTypes lists the proposal types of the experiment.
func ProposalTypes() []string {
	return []string{experiment.ProposalAffine, experiment.ProposalRQMA, experiment.ProposalCRQMA, experiment.ProposalIndepAux}
}

// DefaultConfig returns sizes that keep `trj run robustvs` to a few
// minutes on two cores: N = 4000 SMC particles per model (40 runs of 100), the paper's
// flow architecture and training schedules shortened to 400 Adam steps
// (minibatch doubled at 100, 200 and 300), and 20 bridge replicates.
func DefaultConfig() Config {
	t := flows.DefaultTrainOptions()
	t.Iterations = 400
	t.DoubleAt = []int{100, 200, 300}
	t.DecaySteps = 100
	t.Workers = 1
	ct := flows.ConditionalTrainOptions()
	ct.Iterations = 400
	ct.DoubleAt = []int{100, 200, 300}
	ct.Workers = 1
	return Config{
		Seed:             1,
		Proposals:        ProposalTypes(),
		PilotDraws:       4000,
		BridgeReplicates: 20,
		RQMA:             flows.PaperRQMAConfig(),
		CRQMA:            flows.PaperRQMAConfig(),
		Train:            t,
		CTrain:           ct,
		ScatterSources:   300,
	}
}

// PaperConfig returns the paper's largest size, N = 8000 particles per
// model, with its full training schedules.
func PaperConfig() Config {
	c := DefaultConfig()
	c.PilotDraws = 8000
	c.Train = flows.DefaultTrainOptions()
	c.Train.Workers = 1
	c.CTrain = flows.ConditionalTrainOptions()
	c.CTrain.Workers = 1
	return c
}

// Validate reports a configuration that cannot run.
func (c *Config) Validate() error {
	switch {
	case len(c.Proposals) == 0:
		return errors.New("robustvs: no proposal types")
	case c.PilotDraws < 20:
		return fmt.Errorf("robustvs: %d pilot draws per model, need at least 20", c.PilotDraws)
	case c.BridgeReplicates < 1:
		return fmt.Errorf("robustvs: %d bridge replicates, need at least 1", c.BridgeReplicates)
	case c.ScatterSources < 0:
		return errors.New("robustvs: negative scatter size")
	}
	return experiment.CheckProposals("robustvs", c.Proposals, ProposalTypes())
}

// proposalSet is one proposal type's fitted transports, for the proposal
// scatter.
type proposalSet struct {
	kind   string
	affine []*flows.Affine
	rqma   []*flows.RQMA
	crqma  *flows.ConditionalRQMA
}

// saturate places model k's draws at their saturated positions (zeros
// elsewhere).
func saturate(space *ppl.Space, draws [][][]float64) (rows [][]float64, models []int) {
	for k, ds := range draws {
		pos, _ := space.Positions(k)
		for _, d := range ds {
			xi := make([]float64, space.MaxDim())
			for j, p := range pos {
				xi[p] = d[j]
			}
			rows = append(rows, xi)
			models = append(models, k)
		}
	}
	return rows, models
}

// Result is the outcome of Run: the serialisable Result and what the
// figures need.
type Result struct {
	*experiment.Result
	// Bridge[p][k] holds the normalised bridge estimates of model k's
	// probability under proposal type p, one per replicate.
	Bridge map[string][][]float64
	// Source holds evaluation draws of model (1,1,0,0) as saturated rows,
	// Proposed[p] their proposals into model (1,1,1,1), and Background
	// evaluation draws of (1,1,1,1).
	Source, Background [][]float64
	Proposed           map[string][][]float64
}

// Labels returns the model labels "1,0,0,0", … in model order.
func Labels() []string {
	var out []string
	for _, ind := range indicators {
		s := ""
		for i, v := range ind {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprint(v)
		}
		out = append(out, s)
	}
	return out
}

// Settings returns the trj.Run settings of one proposal type (see the
// package documentation) and the space it runs on: SMC pilots (from is an
// earlier result whose pilots are reused, or nil), TRJ with affine or RQMA
// flows and the map h̄ of Permutations, CTRJ with one conditional RQMA flow,
// or CTRJ with the identity map and ν = N(0, PriorSD²) (indep-aux).
func Settings(d *Data, kind string, cfg Config, from *trj.Fitted) (*ppl.Space, *trj.Settings, error) {
	runs := 2 * cfg.BridgeReplicates
	smc := cfg.SMC
	smc.Particles = max(cfg.PilotDraws/runs, 20)
	s := &trj.Settings{Seed: cfg.Seed, Pilot: trj.PilotSettings{Method: trj.SMCPilots{Runs: runs, SMC: &smc}, From: from}}
	var opts []SpaceOption
	switch kind {
	case experiment.ProposalAffine:
		s.Proposals = &trj.AffineTransports{Permutations: Permutations(indicators)}
	case experiment.ProposalRQMA:
		s.Proposals = &trj.RQMATransports{RQMA: &cfg.RQMA, Train: &cfg.Train, Permutations: Permutations(indicators)}
	case experiment.ProposalCRQMA:
		s.Proposals = &trj.Conditional{RQMA: &cfg.CRQMA, Train: &cfg.CTrain}
	case experiment.ProposalIndepAux:
		s.Proposals = &trj.IndependentAux{Aux: kernels.NormalAux{SD: PriorSD}}
		opts = append(opts, ppl.WithAuxiliaryScale(PriorSD))
	default:
		return nil, nil, fmt.Errorf("robustvs: unknown proposal type %q", kind)
	}
	space, err := NewSpace(d, opts...)
	return space, s, err
}

// Run runs the experiment with trj.Run, once per proposal type: SMC pilots
// (2·BridgeReplicates independent runs per model, half training the flows,
// half evaluating them; the first proposal type's run makes them and the
// others reuse them), the bridge estimate with its jackknife standard error
// over the BridgeReplicates independent evaluation groups, TRJ or CTRJ
// chains, and the proposal scatter. Model probabilities in the Result are
// the bridge estimates; Bridge holds each evaluation group's own estimate.
//
// When a proposal type fails or ctx is cancelled, Run returns the error
// with the Result of the proposal types that finished before it (nil only
// when the configuration or the data are refused), so that an interrupted
// run keeps its work.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.BridgeReplicates < 2 {
		return nil, fmt.Errorf("robustvs: %d bridge replicates (evaluation groups): the standard error needs at least 2", cfg.BridgeReplicates)
	}
	d, dataName, err := loadConfigData(cfg.DataPath)
	if err != nil {
		return nil, err
	}
	if err := d.checkValues(); err != nil {
		return nil, fmt.Errorf("%s: %w", dataName, err)
	}
	labels := Labels()
	res := &Result{
		Result:   experiment.NewResult("robustvs", cfg.Seed, labels),
		Bridge:   map[string][][]float64{},
		Proposed: map[string][][]float64{},
	}
	res.Result.Truth = map[string]experiment.Float{}
	for k, l := range labels {
		res.Result.Truth[l] = experiment.Float(truth[k])
	}
	var first *trj.Fitted
	src, dst := 1, 3
	for _, kind := range cfg.Proposals {
		space, set, err := Settings(d, kind, cfg, first)
		if err != nil {
			return res, err
		}
		cfg.Progress.Logf("robustvs: %s", kind)
		r, fitted, err := trj.RunFitted(ctx, space, set)
		if err != nil {
			return res, fmt.Errorf("robustvs: %s: %w", kind, err)
		}
		if first == nil {
			first = fitted
			p := fitted.Pilots
			res.Settings = map[string]any{
				"data": dataName, "pilot_draws": cfg.PilotDraws, "smc_runs": 2 * cfg.BridgeReplicates,
				"train_draws": len(p[0].Train), "eval_draws": len(p[0].EvalDraws()), "bridge_groups": cfg.BridgeReplicates,
				"rqma_layers": cfg.RQMA.Layers, "rqma_bins": cfg.RQMA.Bins, "rqma_hidden_per_dim": cfg.RQMA.HiddenPerDim,
				"train_iterations": cfg.Train.Iterations, "ctrain_iterations": cfg.CTrain.Iterations,
				"smc_log_evidence": r.Evidence.LogZ, "smc_log_evidence_se": r.Evidence.LogZSE,
				"smc_model_probabilities": r.Evidence.P, "smc_model_probabilities_se": r.Evidence.SE,
			}
			if cfg.ScatterSources > 0 {
				ev := p[src].EvalDraws()
				res.Source, _ = saturate(space, [][][]float64{nil, ev[:min(cfg.ScatterSources, len(ev))]})
				res.Background, _ = saturate(space, [][][]float64{nil, nil, nil, p[dst].EvalDraws()})
			}
		}
		if r.Bridge == nil {
			return res, fmt.Errorf("robustvs: %s: no bridge estimate: %s", kind, r.BridgeError)
		}
		// The bridge's reliability diagnostic (trj.Bridge.Unreliable)
		// goes into the settings map, which the JSON keeps, and the log.
		ess, _ := res.Settings["bridge_min_accept_ess"].(map[string]float64)
		if ess == nil {
			ess = map[string]float64{}
			res.Settings["bridge_min_accept_ess"] = ess
		}
		ess[kind] = r.Bridge.MinAcceptESS
		if r.Bridge.Unreliable {
			bad, _ := res.Settings["bridge_unreliable"].([]string)
			res.Settings["bridge_unreliable"] = append(bad, kind)
			cfg.Progress.Logf("robustvs: %s: unreliable bridge estimate: %.1f effective accepted proposals %s → %s (want ≥ %d); its SE understates the error",
				kind, r.Bridge.MinAcceptESS, labels[r.Bridge.MinFrom], labels[r.Bridge.MinTo], trj.ReliableAcceptESS)
			// What trj reports in its place (trj.Bridge.Reported).
			if p, se, ok := r.Bridge.Reported(); ok {
				bal, _ := res.Settings["bridge_balance"].(map[string][][]float64)
				if bal == nil {
					bal = map[string][][]float64{}
					res.Settings["bridge_balance"] = bal
				}
				bal[kind] = [][]float64{p, se}
				cfg.Progress.Logf("robustvs: %s: balance estimate %.4f ± %.4f", kind, p, se)
			}
		}
		groups := experiment.SucceededGroups(r.Bridge.PerGroup, r.Bridge.PerGroupOK)
		b := experiment.SummarizeBridge(groups, labels)
		b.EvalDraws = len(fitted.Pilots[0].Eval[0])
		pr := &experiment.ProposalResult{
			ModelProbabilities: map[string]experiment.Float{}, Stderr: map[string]experiment.Float{},
			Estimator: "bridge", Bridge: b, Seconds: map[string]experiment.Float{},
		}
		var acc, prop int
		for _, j := range r.Jumps {
			acc, prop = acc+j.Accepted, prop+j.Proposed
		}
		if prop > 0 {
			pr.AcceptanceRate = experiment.Float(float64(acc) / float64(prop))
		}
		for k, l := range labels {
			pr.ModelProbabilities[l] = experiment.Float(r.Bridge.Normalized[k])
			pr.Stderr[l] = experiment.Float(r.Bridge.NormalizedSE[k])
			res.Bridge[kind] = append(res.Bridge[kind], b.Values(k))
		}
		for _, t := range r.Timings {
			if !pr.SetStageSeconds(t.Stage, t.Seconds) && t.Stage == "pilot" && res.Seconds == nil {
				res.Seconds = map[string]experiment.Float{"pilot": experiment.Float(t.Seconds)}
			}
		}
		if cfg.ScatterSources > 0 {
			ps := &proposalSet{kind: kind}
			switch kind {
			case experiment.ProposalAffine, experiment.ProposalRQMA:
				for k := range labels {
					switch t := fitted.Transport(k).(type) {
					case *flows.Affine:
						ps.affine = append(ps.affine, t)
					case *flows.RQMA:
						ps.rqma = append(ps.rqma, t)
					}
				}
			case experiment.ProposalCRQMA:
				ps.crqma = fitted.Conditional()
			}
			prop, err := ps.proposeScatter(space, experiment.Stream(cfg.Seed, "scatter-"+kind, 0), res.Source, src, dst)
			if err != nil {
				return res, err
			}
			res.Proposed[kind] = prop
		}
		res.Add(kind, pr)
	}
	return res, nil
}

// proposeScatter proposes saturated source rows of model src into model
// dst (n_src < n_dst) and returns the proposals as saturated rows (zeros
// at dst's inactive coordinates). The indep-aux proposal reinstates
// coefficients drawn from the prior.
func (s *proposalSet) proposeScatter(space *ppl.Space, rng *rand.Rand, rows [][]float64, src, dst int) ([][]float64, error) {
	n := space.MaxDim()
	posS, _ := space.Positions(src)
	posD, _ := space.Positions(dst)
	actS, _ := space.Active(src)
	actD, _ := space.Active(dst)
	th, z, thD := make([]float64, len(posS)), make([]float64, n), make([]float64, len(posD))
	xi, out := make([]float64, n), [][]float64(nil)
	for _, row := range rows {
		for j, p := range posS {
			th[j] = row[p]
		}
		ok := true
		switch s.kind {
		case experiment.ProposalAffine, experiment.ProposalRQMA:
			var t0, t1 kernels.Transport
			if s.affine != nil {
				t0, t1 = s.affine[src], s.affine[dst]
			} else {
				t0, t1 = s.rqma[src], s.rqma[dst]
			}
			zs := z[:len(posS)]
			if _, err := t0.Forward(th, zs); err != nil {
				ok = false
				break
			}
			ext := make([]float64, len(posD))
			copy(ext, zs)
			for i := len(posS); i < len(posD); i++ {
				ext[i] = rng.NormFloat64()
			}
			zd := make([]float64, len(posD))
			for i, j := range Alignment(indicators[src], indicators[dst]) {
				zd[i] = ext[j]
			}
			if _, err := t1.Inverse(zd, thD); err != nil {
				ok = false
			}
		case experiment.ProposalCRQMA, experiment.ProposalIndepAux:
			copy(xi, row)
			sd := 1.0
			if s.kind == experiment.ProposalIndepAux {
				sd = PriorSD
			}
			for i := range xi {
				if !actS[i] {
					xi[i] = sd * rng.NormFloat64()
				}
			}
			xp := append([]float64(nil), xi...)
			if s.crqma != nil {
				if _, err := s.crqma.Forward(src, xi, z); err != nil {
					ok = false
					break
				}
				if _, err := s.crqma.Inverse(dst, z, xp); err != nil {
					ok = false
					break
				}
			}
			j := 0
			for i, on := range actD {
				if on {
					thD[j] = xp[i]
					j++
				}
			}
		}
		if !ok {
			continue
		}
		r := make([]float64, n)
		for j, p := range posD {
			r[p] = thD[j]
		}
		out = append(out, r)
	}
	return out, nil
}
