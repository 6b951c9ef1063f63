package main

import (
	"fmt"
	"math"
)

// pimaIS are the settings of the Pima reference: Replicates independent
// importance-sampling passes over all 2^p models, Draws multivariate-t
// draws per model each; the replicates' spread gives the standard errors
// of everything reported (evidences, PIPs and coefficients together).
type pimaIS struct {
	Replicates int     `json:"replicates"`
	Draws      int     `json:"draws_per_model_per_replicate"`
	Nu         float64 `json:"t_degrees_of_freedom"`
	Seed       uint64  `json:"seed"`
}

// DefaultPimaIS are the settings of the stored Pima reference.
var DefaultPimaIS = pimaIS{Replicates: 10, Draws: 4000, Nu: 5, Seed: 32}

// pimaPrior returns trj's logistic prior for the responses y: intercept
// ~ N(logit(ȳ), 10²), each standardised coefficient ~ N(0, 2.5²).
func pimaPrior(y []float64) LogitPrior {
	var m float64
	for _, v := range y {
		m += v / float64(len(y))
	}
	return LogitPrior{S0: 10, S: 2.5, M0: math.Log(m / (1 - m))}
}

// logisticMoments is one replicate's answer: PIPs, model-averaged means
// and standard deviations of the coefficients (data units), expected size.
type logisticMoments struct {
	pip, mean, sd []float64
	size          float64
	maxRelSE      float64
}

// logisticReplicate estimates every model's evidence and coefficient
// moments once and averages over models; sd are the predictors' scales,
// which turn standardised coefficients into data units.
func logisticReplicate(ds design, pr LogitPrior, s isSettings, workers int, sd []float64) (*logisticMoments, []isEstimate, error) {
	p := ds.p
	est, err := forModels(ds, pr, s, workers, nil)
	if err != nil {
		return nil, nil, err
	}
	nm := 1 << p
	logw := make([]float64, nm)
	for mask := range nm {
		logw[mask] = est[mask].logZ + logBetaBinomial11(p, popcount(mask))
	}
	mx := floatsMax(logw)
	var tot float64
	for _, w := range logw {
		tot += math.Exp(w - mx)
	}
	r := &logisticMoments{pip: make([]float64, p), mean: make([]float64, p), sd: make([]float64, p)}
	m2 := make([]float64, p)
	for mask := range nm {
		w := math.Exp(logw[mask]-mx) / tot
		r.maxRelSE = math.Max(r.maxRelSE, est[mask].relSE)
		c := 1 // column 0 is the intercept
		for j := range p {
			if mask>>j&1 == 0 {
				continue
			}
			r.pip[j] += w
			r.mean[j] += w * est[mask].mean[c] / sd[j]
			m2[j] += w * est[mask].m2[c] / (sd[j] * sd[j])
			r.size += w
			c++
		}
	}
	for j := range p {
		r.sd[j] = math.Sqrt(math.Max(m2[j]-r.mean[j]*r.mean[j], 0))
	}
	return r, est, nil
}

// pimaReference is the importance-sampling reference of Pima under trj's
// logistic prior.
func pimaReference(s pimaIS, workers int) (*Reference, error) {
	d, names, err := realData(PimaFile)
	if err != nil {
		return nil, err
	}
	ds := standardise(d)
	pr := pimaPrior(d.y)
	sd := columnSD(d)
	p := ds.p
	reps := make([]*logisticMoments, s.Replicates)
	var last []isEstimate
	for r := range s.Replicates {
		if reps[r], last, err = logisticReplicate(ds, pr, isSettings{Draws: s.Draws, Nu: s.Nu, Seed: s.Seed + uint64(r)}, workers, sd); err != nil {
			return nil, err
		}
	}
	avg := func(get func(*logisticMoments) []float64) (mean, se []float64) {
		mean, se = make([]float64, p), make([]float64, p)
		nr := float64(len(reps))
		for _, r := range reps {
			for j, v := range get(r) {
				mean[j] += v / nr
			}
		}
		for _, r := range reps {
			for j, v := range get(r) {
				se[j] += (v - mean[j]) * (v - mean[j]) / (nr - 1) / nr
			}
		}
		for j := range se {
			se[j] = math.Sqrt(se[j])
		}
		return mean, se
	}
	pip, pipSE := avg(func(r *logisticMoments) []float64 { return r.pip })
	mean, meanSE := avg(func(r *logisticMoments) []float64 { return r.mean })
	csd, sdSE := avg(func(r *logisticMoments) []float64 { return r.sd })
	var size, maxRel, gap float64
	for _, r := range reps {
		size += r.size / float64(len(reps))
		maxRel = math.Max(maxRel, r.maxRelSE)
	}
	for _, e := range last {
		gap = math.Max(gap, math.Abs(e.laplace-e.logZ))
	}
	top, err := combine(p, last)
	if err != nil {
		return nil, err
	}
	return &Reference{
		Problem: "Pima (MASS Pima.tr + Pima.te) under trj's logistic prior",
		Data:    "select/" + PimaFile,
		N:       ds.n,
		P:       p,
		Method: fmt.Sprintf("importance sampling of all %d models: the evidence and the coefficients' posterior moments of each from %d draws of a multivariate t (%g degrees of freedom) centred at the posterior mode (Newton) with the inverse negative Hessian as scale; %d independent replicates averaged, their spread the standard errors",
			1<<p, s.Draws, s.Nu, s.Replicates),
		Likelihood: "type = Yes ~ Bernoulli(logit⁻¹(Xβ)), X = [1, standardised predictors of the model]",
		Prior: map[string]any{
			"form": "intercept ~ N(logit(ȳ), s0²); each coefficient of a standardised predictor ~ N(0, s²)",
			"s0":   pr.S0, "s": pr.S, "intercept_mean": pr.M0, "is": s,
		},
		ModelPrior:   betaBinomial,
		Design:       "predictors centred and scaled to unit sample sd (divisor n−1); type Yes = 1, No = 0",
		Names:        names,
		PIP:          pip,
		PIPSE:        pipSE,
		CoefUnits:    "data units (per unit of each predictor as in the file; the standardised coefficient divided by the predictor's sd)",
		CoefMean:     mean,
		CoefMeanSE:   meanSE,
		CoefSD:       csd,
		CoefSDSE:     sdSE,
		ExpectedSize: size,
		TopModels:    top.Top,
		Diagnostics: map[string]any{
			"max_pip_se":                                  floatsMax(pipSE),
			"max_coef_mean_se_over_sd":                    maxRatio(meanSE, csd),
			"max_relative_se_of_an_evidence":              maxRel,
			"max_abs_log_laplace_minus_is_last_replicate": gap,
			"top_models_note":                             "top models from the last replicate",
		},
		Program: "go run ./bench/selectref -real pima",
	}, nil
}
