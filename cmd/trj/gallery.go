package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models"
	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/draws"
)

// dataDirEnv names the environment variable holding a data folder, laid
// out like package datasets, in which a model's or an experiment's data
// file is looked up when -data is not given. When it is unset the data
// embedded in the binary are used.
const dataDirEnv = "TRJ_DATA"

// gallery is the Registry of package models.
type gallery struct{}

func (gallery) Names() []string { return models.Names() }

func (gallery) Model(name, dataPath string) (Model, error) {
	e, ok := models.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("no model %q", name)
	}
	dataPath, err := resolveDataPath(dataPath, e.DataFile)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", name, err)
	}
	m, err := e.New(dataPath)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// DataName names the data the model called name is conditioned on for
// the -data value dataPath: the file, or the embedded data set.
func (gallery) DataName(name, dataPath string) string {
	e, ok := models.Lookup(name)
	if !ok {
		return dataPath
	}
	return dataName(dataPath, e.DataFile)
}

// Describe returns the facts "trj models" prints about the model called
// name; it builds the model on its embedded data to learn its dimension.
func (gallery) Describe(name string) (ModelInfo, error) {
	e, ok := models.Lookup(name)
	if !ok {
		return ModelInfo{}, fmt.Errorf("no model %q", name)
	}
	m, err := e.New("")
	if err != nil {
		return ModelInfo{}, fmt.Errorf("model %q: %w", name, err)
	}
	size, err := datasets.Size(e.DataFile)
	if err != nil {
		return ModelInfo{}, err
	}
	return ModelInfo{Dim: m.Dim(), DataFile: e.DataFile, DataBytes: size, Description: e.Description}, nil
}

// resolveDataPath is the data file to read for the -data value dataPath
// and the data set called file: dataPath itself when given, else file in
// the folder $TRJ_DATA when that is set (it must be there), else "" for
// the copy embedded in the binary.
func resolveDataPath(dataPath, file string) (string, error) {
	if dataPath != "" {
		return dataPath, nil
	}
	dir := os.Getenv(dataDirEnv)
	if dir == "" {
		return "", nil
	}
	p := filepath.Join(dir, filepath.FromSlash(file))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no -data given and %s=%s, but its data file %s is not there (%v); pass -data, or unset %s to use the embedded data",
			dataDirEnv, dir, file, err, dataDirEnv)
	}
	return p, nil
}

// dataName says which data a run with the -data value dataPath uses for
// the data set called file: the path read, or the embedded copy.
func dataName(dataPath, file string) string {
	p, err := resolveDataPath(dataPath, file)
	switch {
	case err != nil:
		return filepath.Join(os.Getenv(dataDirEnv), filepath.FromSlash(file))
	case p == "":
		return datasets.Label(file)
	}
	return p
}

// pplModel returns m as the ppl.Model the samplers need.
func pplModel(m Model) (ppl.Model, error) {
	pm, ok := m.(ppl.Model)
	if !ok || pm == nil {
		return nil, fmt.Errorf("model %T is not a ppl.Model", m)
	}
	return pm, nil
}

// mcmcSampler runs kernels.Sample with NUTS or RWM, one goroutine and one
// model clone per chain, and returns the constrained draws with the
// sampler's diagnostic columns (CmdStan's for NUTS; lp__, accept_stat__
// and stepsize__, the proposal scale, for RWM). With cfg.Stream it writes
// each chain's draws as they are made, its adaptation block and its
// gradient counts. Cancelled, it returns the draws made so far. method
// makes the kernels.Method from the NUTS warm-up the flags ask for.
func mcmcSampler(method func(kernels.NUTSAdaptConfig) kernels.Method) Sampler {
	return func(ctx context.Context, m Model, cfg SampleConfig) (*draws.Draws, []draws.Setting, error) {
		pm, err := pplModel(m)
		if err != nil {
			return nil, nil, err
		}
		warmup := cfg.Warmup
		if warmup == 0 {
			warmup = -1 // kernels.Sample reads 0 as its default
		}
		adapt := kernels.NUTSAdaptConfig{TargetAccept: cfg.AdaptDelta}
		switch cfg.Metric {
		case "", "diag_e":
			adapt.Metric = kernels.DiagMetric
		case "dense_e":
			adapt.Metric = kernels.DenseMetric
		case "unit_e":
			adapt.Metric = kernels.UnitMetric
		default:
			return nil, nil, fmt.Errorf("unknown metric %q", cfg.Metric)
		}
		// The kernels number chains as in the whole run (cfg.FirstChain
		// onwards, the shard); clones, d and res.Chains count from 0. Each
		// chain makes its clone in its own goroutine, after Sample has
		// checked that the run fits in memory.
		first := cfg.FirstChain
		clones := make([]ppl.Model, cfg.Chains)
		alg := method(adapt)
		set := &kernels.SampleSettings{
			Method: alg, Chains: first + cfg.Chains, Shard: make([]int, cfg.Chains), Warmup: warmup, Draws: cfg.Draws, Seed: cfg.Seed,
			Progress: cfg.Progress,
		}
		for k := range set.Shard {
			set.Shard[k] = first + k
		}
		if cfg.Stream != nil {
			layout := draws.Layout{Diagnostics: alg.DiagnosticColumns(), Params: pm.ParamNames()}
			set.Output = func(c int) (kernels.ChainOutput, error) {
				s, err := cfg.Stream(c-first, layout)
				if err != nil {
					return nil, err
				}
				return &chainStream{CmdStanOutput: kernels.CmdStanOutput{Model: clones[c-first], Method: alg, Stream: s}}, nil
			}
		}
		res, err := kernels.Sample(ctx,
			func(c int) (kernels.Target, error) {
				clones[c-first] = pm.Clone()
				return clones[c-first], nil
			}, set)
		if res == nil {
			return nil, nil, err
		}
		d, cerr := res.ToDraws(func(c int) kernels.Constrainer { return clones[c] })
		if cerr != nil {
			return nil, nil, cerr
		}
		return d, nil, err
	}
}

// chainStream writes a chain to its stream as kernels.CmdStanOutput does
// but leaves the stream open for the caller, with the chain's gradient
// counts as settings at its end.
type chainStream struct {
	kernels.CmdStanOutput
}

// Close implements kernels.ChainOutput.
func (o *chainStream) Close(ch *kernels.Chain, stopped error) error {
	o.Stream.SetElapsed(ch.WarmupTime, ch.SampleTime)
	return o.Stream.WriteSettings([]draws.Setting{
		{Key: "warmup_grad_evals", Value: strconv.Itoa(ch.WarmupGradEvals)},
		{Key: "sampling_grad_evals", Value: strconv.Itoa(ch.SampleGradEvals)},
	})
}

// smcReferenceScale is the standard deviation of the Gaussian reference on
// the unconstrained space from which SMC tempers to the posterior; it
// matches the spread of Stan's initial points, uniform on (−2, 2).
const smcReferenceScale = 2.0

// referenceTempered is the tempering path of trj sample -sampler smc:
// p_β(u) ∝ r(u)^{1−β}·p(u)^β, from the normalised Gaussian reference
// r = N(0, s²I) on the unconstrained space to the model's posterior p.
// Written as a prior r and a "likelihood" p/r it fits kernels.RunSMC, works
// for models with improper priors, and its log evidence estimates
// log ∫ p(u) du: the model's log marginal likelihood when its prior is
// proper and its density normalised, as ppl's are.
type referenceTempered struct {
	m     ppl.Model
	scale float64
	grad  []float64
}

func (r *referenceTempered) Dim() int { return r.m.Dim() }

func (r *referenceTempered) LogPriorLik(x, gradPrior, gradLik []float64) (float64, float64, error) {
	n := r.m.Dim()
	if len(x) != n {
		return 0, 0, fmt.Errorf("position has length %d, model dimension %d", len(x), n)
	}
	s2 := r.scale * r.scale
	lr := -float64(n) * (math.Log(r.scale) + 0.5*math.Log(2*math.Pi))
	for _, v := range x {
		lr -= 0.5 * v * v / s2
	}
	var lp float64
	var err error
	if gradPrior == nil || gradLik == nil {
		lp, err = r.m.LogDensity(x)
	} else {
		lp, err = r.m.LogDensityGrad(x, r.grad)
		for i, v := range x {
			gradPrior[i] = -v / s2
			gradLik[i] = r.grad[i] - gradPrior[i]
		}
	}
	if err == nil && (math.IsNaN(lp) || math.IsInf(lp, 0)) {
		err = fmt.Errorf("log density %v", lp)
	}
	return lr, lp - lr, err
}

func (r *referenceTempered) SamplePrior(rng *rand.Rand, x []float64) error {
	for i := range x {
		x[i] = r.scale * rng.NormFloat64()
	}
	return nil
}

// smcSampler runs the SMC sampler with cfg.Draws particles, tempering from
// a Gaussian reference to the posterior (see referenceTempered), and
// returns the final, equally weighted particles as one chain; cfg.Chains
// and cfg.Warmup do not apply. Since resampling duplicates particles and
// they are not a Markov chain, the R̂ and ESS of the summary table mean
// little: the log evidence is in the settings as log_evidence.
func smcSampler(ctx context.Context, m Model, cfg SampleConfig) (*draws.Draws, []draws.Setting, error) {
	pm, err := pplModel(m)
	if err != nil {
		return nil, nil, err
	}
	set := &kernels.SMCSettings{Particles: cfg.Draws, Seed: cfg.Seed}
	switch cfg.SMCMove {
	case "", kernels.SMCEigenRWM{}.String():
		set.Move = kernels.SMCEigenRWM{}
	case kernels.SMCRWM{}.String():
		set.Move = kernels.SMCRWM{}
	case kernels.SMCNUTS{}.String():
		set.Move = kernels.SMCNUTS{}
	default:
		return nil, nil, fmt.Errorf("unknown SMC move %q", cfg.SMCMove)
	}
	set.Progress = cfg.Tempering
	res, err := kernels.RunSMC(ctx, func(int) (kernels.TemperedModel, error) {
		c := pm.Clone()
		return &referenceTempered{m: c, scale: smcReferenceScale, grad: make([]float64, c.Dim())}, nil
	}, set)
	if err != nil {
		return nil, nil, err
	}
	d, err := draws.New(draws.Layout{Diagnostics: []string{draws.LP}, Params: pm.ParamNames()}, 1)
	if err != nil {
		return nil, nil, err
	}
	x := make([]float64, len(pm.ParamNames()))
	for i := 0; i < cfg.Draws; i++ {
		if err := pm.Constrain(res.Particle(i), x); err != nil {
			return nil, nil, fmt.Errorf("particle %d: %w", i+1, err)
		}
		if err := d.Append(0, x, []float64{res.LogPrior[i] + res.LogLik[i]}); err != nil {
			return nil, nil, err
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	return d, []draws.Setting{
		{Key: "log_evidence", Value: f(res.LogZ)},
		{Key: "smc_particles", Value: strconv.Itoa(cfg.Draws)},
		{Key: "smc_temperatures", Value: strconv.Itoa(len(res.Temperatures))},
		{Key: "smc_reference_scale", Value: f(smcReferenceScale)},
		{Key: "smc_log_density_evals", Value: strconv.Itoa(res.Evals)},
	}, nil
}
