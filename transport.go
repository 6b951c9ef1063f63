package trj

import (
	"context"
	"fmt"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// TransportReport says which transport a model got and how well it fits.
type TransportReport struct {
	// Kind is "affine", "RQMA", "conditional RQMA" or "user".
	Kind string
	// Quality is the chosen transport's held-out log-likelihood and
	// importance ESS on the model's evaluation draws (zero for user
	// transports without a density).
	Quality flows.Quality
	// Tried lists the other transports fitted and their quality, for
	// TransportAuto.
	Tried map[string]flows.Quality `json:",omitempty"`
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

// fitTransport fits model k's transport; cache lends compiled training
// losses between the models' RQMA fits of one dimension.
func fitTransport(ctx context.Context, s *Settings, space *ppl.Space, k int, p *pilot, cache *flows.TrainCache) (kernels.Transport, TransportReport, error) {
	m, err := space.Model(k)
	if err != nil {
		return nil, TransportReport{}, err
	}
	eval := spread(p.EvalDraws(), assessHeldOut)
	target := m.Clone()
	assess := func(f flows.Density) (flows.Quality, error) {
		return flows.Assess(f, eval, nil, target.LogDensity, assessDraws, subSeed(s.Seed, "assess", k))
	}
	fitRQMA := func() (*flows.RQMA, error) {
		cfg := flows.PaperRQMAConfig()
		if s.Transport.RQMA != nil {
			cfg = *s.Transport.RQMA
		}
		opts := flows.DefaultTrainOptions()
		if s.Transport.Train != nil {
			opts = *s.Transport.Train
		}
		opts.Seed = subSeed(s.Seed, "flow", k)
		if opts.Cache == nil {
			opts.Cache = cache
		}
		// One worker: runs are then the same at any GOMAXPROCS, and the
		// models' flows already train in parallel.
		opts.Workers = 1
		f, _, err := flows.FitRQMA(ctx, p.Train, cfg, opts)
		return f, err
	}
	switch s.Transport.Kind {
	case TransportUser:
		t := s.Transport.User[k]
		if t == nil {
			return nil, TransportReport{}, fmt.Errorf("user transport %d is nil", k)
		}
		if t.Dim() != m.Dim() {
			return nil, TransportReport{}, fmt.Errorf("user transport %d has dimension %d, model %q has %d", k, t.Dim(), space.ModelLabel(k), m.Dim())
		}
		rep := TransportReport{Kind: "user"}
		if d, ok := t.(flows.Density); ok {
			if rep.Quality, err = assess(d); err != nil {
				return nil, rep, err
			}
		}
		return t, rep, nil
	case TransportRQMA:
		f, err := fitRQMA()
		if err != nil {
			return nil, TransportReport{}, err
		}
		q, err := assess(f)
		return f, TransportReport{Kind: "RQMA", Quality: q}, err
	}
	a, err := flows.FitAffine(p.Train, nil)
	if err != nil {
		return nil, TransportReport{}, err
	}
	qa, err := assess(a)
	if err != nil {
		return nil, TransportReport{}, err
	}
	if s.Transport.Kind == TransportAffine || qa.ESSFraction >= s.Transport.AutoESS {
		return a, TransportReport{Kind: "affine", Quality: qa}, nil
	}
	f, err := fitRQMA()
	if err != nil {
		return nil, TransportReport{}, err
	}
	qf, err := assess(f)
	if err != nil {
		return nil, TransportReport{}, err
	}
	if qf.HeldOutLogLik > qa.HeldOutLogLik {
		return f, TransportReport{Kind: "RQMA", Quality: qf, Tried: map[string]flows.Quality{"affine": qa}}, nil
	}
	return a, TransportReport{Kind: "affine", Quality: qa, Tried: map[string]flows.Quality{"RQMA": qf}}, nil
}

// fitConditional trains one conditional RQMA flow on the saturated space.
func fitConditional(ctx context.Context, s *Settings, space *ppl.Space, pilots []*pilot) (*flows.ConditionalRQMA, error) {
	K := space.NumModels()
	spec := flows.ConditionalSpec{Active: space.ActiveMasks(), Contexts: make([][]float64, K)}
	for k := range K {
		spec.Contexts[k] = make([]float64, K)
		spec.Contexts[k][k] = 1
	}
	var x [][]float64
	var models []int
	for k, p := range pilots {
		for _, th := range p.Train {
			xi := make([]float64, space.MaxDim())
			u := make([]float64, space.MaxDim()-len(th))
			if err := space.Concat(k, th, u, xi); err != nil {
				return nil, err
			}
			x = append(x, xi)
			models = append(models, k)
		}
	}
	cfg := flows.PaperRQMAConfig()
	if s.Transport.RQMA != nil {
		cfg = *s.Transport.RQMA
	}
	opts := flows.ConditionalTrainOptions()
	if s.Transport.Train != nil {
		opts = *s.Transport.Train
	}
	opts.Seed = subSeed(s.Seed, "conditional", 0)
	opts.Workers = 1
	f, _, err := flows.FitConditionalRQMA(ctx, spec, x, models, cfg, opts)
	return f, err
}
