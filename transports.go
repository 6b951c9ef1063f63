package trj

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// AutoTransports is the default family (a nil Settings.Proposals): per-model
// transports for TRJ, each an affine map z = L⁻¹(θ − μ) fitted to the
// model's training draws, replaced by an RQMA flow only where the affine
// map's importance ESS fraction falls below AutoESS and the flow's held-out
// log-likelihood is higher.
type AutoTransports struct {
	// AutoESS is the importance ESS fraction below which an RQMA flow is
	// tried (0.5).
	AutoESS float64
	// RQMA and Train configure the flows (AutoRQMAConfig and
	// AutoTrainOptions when nil); Train's Seed and Workers are the run's.
	RQMA  *flows.RQMAConfig
	Train *flows.TrainOptions
	// Permutations is TRJ's map h̄ (see kernels.TRJConfig); nil is the
	// identity.
	Permutations [][][]int
}

// Name implements Proposals.
func (a *AutoTransports) Name() string { return "auto" }

// CheckSpace implements SpaceChecker.
func (a *AutoTransports) CheckSpace(space *ppl.Space) error {
	return checkPermutations(a.Permutations, space)
}

// Reload implements Reloader.
func (a *AutoTransports) Reload(set io.Reader) Proposals {
	return &LoadedTransports{From: set, Permutations: a.Permutations}
}

// Fit implements Proposals.
func (a *AutoTransports) Fit(ctx context.Context, d *FitData) (FittedProposals, error) {
	threshold := a.AutoESS
	if threshold == 0 {
		threshold = 0.5
	}
	if !(threshold > 0 && threshold <= 1) {
		return nil, fmt.Errorf("trj: AutoESS %v outside (0, 1]", threshold)
	}
	return fitPerModel(ctx, d, a.Permutations, func(ctx context.Context, m *modelFit) (kernels.Transport, TransportReport, error) {
		af, qa, err := m.affine()
		if err != nil || qa.ESSFraction >= threshold {
			return af, TransportReport{Kind: "affine", Quality: qa}, err
		}
		cfg, train := AutoRQMAConfig(), AutoTrainOptions()
		if a.RQMA != nil {
			cfg = *a.RQMA
		}
		if a.Train != nil {
			train = *a.Train
		}
		f, qf, err := m.rqma(ctx, &cfg, &train)
		if err != nil {
			return nil, TransportReport{}, err
		}
		if qf.HeldOutLogLik > qa.HeldOutLogLik {
			return f, TransportReport{Kind: "RQMA", Quality: qf, Tried: map[string]flows.Quality{"affine": qa}}, nil
		}
		return af, TransportReport{Kind: "affine", Quality: qa, Tried: map[string]flows.Quality{"RQMA": qf}}, nil
	})
}

// AutoRQMAConfig is AutoTransports' default flow: the paper's RQMA flow
// (3 layers, 10 bins) with a MADE hidden width of 8·n rather than 32·n and
// the sigmoid scale √(8/π), which makes the squashing map close to the
// standard normal CDF, so that the splines start from a near-uniform
// image of a near-Gaussian posterior. On the factor-analysis space (2 vs 3
// factors, NUTS pilots) the paper's width made training most of a
// default run's cost; see bench/README.md, "Factor analysis: trj.Run
// defaults", for the measurements.
func AutoRQMAConfig() flows.RQMAConfig {
	c := flows.PaperRQMAConfig()
	c.HiddenPerDim = 8
	c.SigmoidScale = math.Sqrt(8 / math.Pi)
	return c
}

// AutoTrainOptions is AutoTransports' default training: Adam from
// learning rate 3e-3, constant for 200 steps then decayed by 0.999 per
// step, minibatches of 32, at most 3000 steps, stopped early when the mean
// loss on a 10 % validation split (evaluated every 25 steps) has not
// decreased over a window of 100 steps, keeping the best window's
// parameters. It trains until the held-out fit stops improving instead of
// a fixed schedule of growing batches.
func AutoTrainOptions() flows.TrainOptions {
	o := flows.DefaultTrainOptions()
	o.Iterations = 3000
	o.Decay1 = 1
	o.Decay2 = 0.999
	o.BatchSize = 32
	o.DoubleAt = nil
	o.ValidationFraction = 0.1
	o.ValidateEvery = 25
	o.StopWindow = 100
	return o
}

// AffineTransports fits z = L⁻¹(θ − μ) to each model's training draws (TRJ).
type AffineTransports struct {
	// Permutations is TRJ's map h̄ (see kernels.TRJConfig).
	Permutations [][][]int
}

// Name implements Proposals.
func (a *AffineTransports) Name() string { return "affine" }

// CheckSpace implements SpaceChecker.
func (a *AffineTransports) CheckSpace(space *ppl.Space) error {
	return checkPermutations(a.Permutations, space)
}

// Reload implements Reloader.
func (a *AffineTransports) Reload(set io.Reader) Proposals {
	return &LoadedTransports{From: set, Permutations: a.Permutations}
}

// Fit implements Proposals.
func (a *AffineTransports) Fit(ctx context.Context, d *FitData) (FittedProposals, error) {
	return fitPerModel(ctx, d, a.Permutations, func(_ context.Context, m *modelFit) (kernels.Transport, TransportReport, error) {
		f, q, err := m.affine()
		return f, TransportReport{Kind: "affine", Quality: q}, err
	})
}

// RQMATransports trains the paper's RQMA flow for each model (TRJ).
type RQMATransports struct {
	// RQMA is the flow configuration (flows.PaperRQMAConfig when nil).
	RQMA *flows.RQMAConfig
	// Train configures training (flows.DefaultTrainOptions when nil); its
	// Seed and Workers are the run's.
	Train *flows.TrainOptions
	// Permutations is TRJ's map h̄ (see kernels.TRJConfig).
	Permutations [][][]int
}

// Name implements Proposals.
func (r *RQMATransports) Name() string { return "RQMA" }

// CheckSpace implements SpaceChecker.
func (r *RQMATransports) CheckSpace(space *ppl.Space) error {
	return checkPermutations(r.Permutations, space)
}

// Reload implements Reloader.
func (r *RQMATransports) Reload(set io.Reader) Proposals {
	return &LoadedTransports{From: set, Permutations: r.Permutations}
}

// Fit implements Proposals.
func (r *RQMATransports) Fit(ctx context.Context, d *FitData) (FittedProposals, error) {
	return fitPerModel(ctx, d, r.Permutations, func(ctx context.Context, m *modelFit) (kernels.Transport, TransportReport, error) {
		f, q, err := m.rqma(ctx, r.RQMA, r.Train)
		return f, TransportReport{Kind: "RQMA", Quality: q}, err
	})
}

// UserTransports uses transports of one's own (TRJ).
type UserTransports struct {
	// New returns a new copy of model k's transport: it is called once per
	// model for the report and again for every goroutine that needs its
	// own (the bridge's groups, the chains), possibly from several at once.
	New func(k int) (kernels.Transport, error)
	// Permutations is TRJ's map h̄ (see kernels.TRJConfig).
	Permutations [][][]int
}

// Name implements Proposals.
func (u *UserTransports) Name() string { return "user" }

// CheckSpace implements SpaceChecker.
func (u *UserTransports) CheckSpace(space *ppl.Space) error {
	return checkPermutations(u.Permutations, space)
}

// Fit implements Proposals.
func (u *UserTransports) Fit(ctx context.Context, d *FitData) (FittedProposals, error) {
	if u.New == nil {
		return nil, fmt.Errorf("trj: user transports: New is nil")
	}
	fit, err := fitPerModel(ctx, d, u.Permutations, func(_ context.Context, m *modelFit) (kernels.Transport, TransportReport, error) {
		t, err := u.New(m.k)
		switch {
		case err != nil:
			return nil, TransportReport{}, err
		case t == nil:
			return nil, TransportReport{}, fmt.Errorf("user transport %d is nil", m.k)
		case t.Dim() != m.model.Dim():
			return nil, TransportReport{}, fmt.Errorf("user transport %d has dimension %d, model %q has %d", m.k, t.Dim(), d.Space.ModelLabel(m.k), m.model.Dim())
		}
		rep := TransportReport{Kind: "user"}
		if f, ok := t.(flows.Density); ok {
			rep.Quality, err = m.assess(f)
		}
		return t, rep, err
	})
	if err != nil {
		return nil, err
	}
	fit.clone = u.New
	return fit, nil
}

// perModel is a fitted family of per-model transports.
type perModel struct {
	space   *ppl.Space
	ts      []kernels.Transport
	reports []TransportReport
	perms   [][][]int
	// clone gives model k's transport for one more goroutine.
	clone func(k int) (kernels.Transport, error)
}

// modelFit is what fitting one model's transport needs.
type modelFit struct {
	d      *FitData
	k      int
	model  ppl.Model
	pilot  *Pilot
	cache  *flows.TrainCache
	assess func(flows.Density) (flows.Quality, error)
}

// fitPerModel fits every model's transport with fit, in parallel.
func fitPerModel(ctx context.Context, d *FitData, perms [][][]int, fit func(context.Context, *modelFit) (kernels.Transport, TransportReport, error)) (*perModel, error) {
	K := d.Space.NumModels()
	p := &perModel{space: d.Space, ts: make([]kernels.Transport, K), reports: make([]TransportReport, K), perms: perms}
	cache := flows.NewTrainCache() // dropped with the fit
	err := parallel.For(ctx, K, func(ctx context.Context, k int) error {
		m, err := d.Space.Model(k)
		if err != nil {
			return err
		}
		eval := spread(d.Pilots[k].EvalDraws(), assessHeldOut)
		target := m.Clone()
		mf := &modelFit{d: d, k: k, model: m, pilot: d.Pilots[k], cache: cache,
			assess: func(f flows.Density) (flows.Quality, error) {
				return flows.Assess(f, eval, nil, target.LogDensity, assessDraws, d.Seed("assess", k))
			}}
		t, rep, err := fit(ctx, mf)
		if err != nil {
			return fmt.Errorf("trj: transport of model %q: %w", d.Space.ModelLabel(k), err)
		}
		p.ts[k], p.reports[k] = t, rep
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.clone = func(k int) (kernels.Transport, error) { return cloneFlow(p.ts[k]) }
	return p, nil
}

// affine fits and assesses the model's affine transport.
func (m *modelFit) affine() (*flows.Affine, flows.Quality, error) {
	a, err := flows.FitAffine(m.pilot.Train, nil)
	if err != nil {
		return nil, flows.Quality{}, err
	}
	q, err := m.assess(a)
	return a, q, err
}

// rqma trains and assesses the model's RQMA flow.
func (m *modelFit) rqma(ctx context.Context, config *flows.RQMAConfig, train *flows.TrainOptions) (*flows.RQMA, flows.Quality, error) {
	cfg := flows.PaperRQMAConfig()
	if config != nil {
		cfg = *config
	}
	opts := flows.DefaultTrainOptions()
	if train != nil {
		opts = *train
	}
	opts.Seed = m.d.Seed("flow", m.k)
	if opts.Cache == nil {
		opts.Cache = m.cache
	}
	// One worker: runs are then the same at any GOMAXPROCS, and the
	// models' flows already train in parallel.
	opts.Workers = 1
	f, _, err := flows.FitRQMA(ctx, m.pilot.Train, cfg, opts)
	if err != nil {
		return nil, flows.Quality{}, err
	}
	q, err := m.assess(f)
	return f, q, err
}

// cloneFlow copies a transport of package flows for another goroutine.
func cloneFlow(t kernels.Transport) (kernels.Transport, error) {
	switch t := t.(type) {
	case *flows.Affine:
		return t.Clone(), nil
	case *flows.RQMA:
		return t.Clone(), nil
	case *flows.GraphFlow:
		return t.Clone(), nil
	}
	return nil, fmt.Errorf("trj: cannot copy a transport of type %T", t)
}

func (p *perModel) Algorithm() string                 { return "TRJ" }
func (p *perModel) Reports() []TransportReport        { return p.reports }
func (p *perModel) Transport(k int) kernels.Transport { return p.ts[k] }

// ModelTransport implements ModelTransports.
func (p *perModel) ModelTransport(k int) (kernels.Transport, error) { return p.clone(k) }

// Kernel implements FittedProposals: TRJ with flowMoves independence moves
// proposed by each model's transport.
func (p *perModel) Kernel(jump [][]float64, within kernels.WithinModelKernel, flowMoves int) (kernels.RJKernel, error) {
	space := p.space.Clone()
	ts := make([]kernels.Transport, len(p.ts))
	for k := range ts {
		var err error
		if ts[k], err = p.clone(k); err != nil {
			return nil, fmt.Errorf("trj: transport %d: %w", k, err)
		}
	}
	if flowMoves > 0 {
		within = kernels.NewFlowMoves(within, space, ts, flowMoves)
	}
	return kernels.NewTRJ(kernels.TRJConfig{Target: space, Transports: ts, Jump: jump, Within: within, Alternate: true, Permutations: p.perms})
}

// Save implements FittedProposals.
func (p *perModel) Save(w io.Writer) error {
	set := make([]flows.Labeled, len(p.ts))
	for k, t := range p.ts {
		f, ok := t.(flows.Flow)
		if !ok {
			return fmt.Errorf("trj: the transport of model %q is a %T, which flows cannot save", p.space.ModelLabel(k), t)
		}
		set[k] = flows.Labeled{Model: p.space.ModelLabel(k), Dim: p.space.ModelDim(k), Flow: f}
	}
	if err := flows.SaveSet(w, set); err != nil {
		return fmt.Errorf("trj: saving the transports: %w", err)
	}
	return nil
}

// assessDraws is the number of pushforward draws behind each importance ESS.
const assessDraws = 1000

// assessHeldOut bounds the evaluation draws behind each held-out
// log-likelihood: with more, its standard error is already negligible, and
// evaluating a flow at all 10⁶ evaluation draws per model of `trj run sas
// -paper` took three times as long as training it.
const assessHeldOut = 20000

// spread returns at most n of draws, evenly spaced (so every evaluation
// group contributes), or draws itself when it has no more than n.
func spread(draws [][]float64, n int) [][]float64 {
	if len(draws) <= n {
		return draws
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = draws[i*len(draws)/n]
	}
	return out
}
