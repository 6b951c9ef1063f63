package main

import (
	"fmt"
	"math"
)

const gPriorForm = "β_γ | σ² ~ N(0, g σ² (Xc_γᵀXc_γ)⁻¹) on the centred predictors Xc in data units; flat prior on the intercept, p(σ²) ∝ 1/σ²; evidence ∝ (1+g)^((n−1−k)/2) (1+g(1−R²))^(−(n−1)/2)"

const gPriorCoef = "given the model, β_γ | y is multivariate t with n−1 degrees of freedom, mean g/(1+g) β̂_OLS and covariance g/(1+g) · S(1 − g/(1+g) R²)/(n−3) · (Xc_γᵀXc_γ)⁻¹ (S = Σ(y−ȳ)²); model-averaged with zero outside the model"

// uscrimeReference is the exact g-prior posterior of UScrime (2^15 models).
func uscrimeReference() (*Reference, error) {
	d, names, err := realData(UScrimeFile)
	if err != nil {
		return nil, err
	}
	cm, e, err := gPriorExact(d)
	if err != nil {
		return nil, err
	}
	pip, mean, sd, size := cm.summary()
	n, p := len(d.y), len(names)
	return &Reference{
		Problem:      "UScrime under Zellner's g-prior as BMS uses it (g = \"UIP\" = n, mprior = \"random\")",
		Data:         "select/" + UScrimeFile,
		N:            n,
		P:            p,
		Method:       fmt.Sprintf("exact: all %d models enumerated with the closed-form g-prior evidence and conditional posterior moments", 1<<p),
		Likelihood:   "y ~ N(α + Xβ, σ² I)",
		Prior:        map[string]any{"form": gPriorForm, "g": float64(n), "coefficients": gPriorCoef},
		ModelPrior:   betaBinomial + " (BMS mprior = \"random\" with its default mprior.size = p/2)",
		Design:       "as in the file (logs of all but So, as in Raftery, Madigan and Hoeting 1997); the g-prior is invariant to the predictors' scale",
		Names:        names,
		PIP:          pip,
		PIPSE:        make([]float64, p),
		CoefUnits:    "data units (per unit of each predictor as in the file)",
		CoefMean:     mean,
		CoefMeanSE:   make([]float64, p),
		CoefSD:       sd,
		CoefSDSE:     make([]float64, p),
		ExpectedSize: size,
		TopModels:    e.Top,
		Diagnostics:  map[string]any{"bms_check": uscrimeBMSCheck},
		Program:      "go run ./bench/selectref -real uscrime",
	}, nil
}

// uscrimeBMSCheck records the agreement with BMS 0.3.5 (TestUScrimeBMS
// holds the numbers).
const uscrimeBMSCheck = "BMS 0.3.5: coef(bms(d, mcmc = \"enumerate\", g = \"UIP\", mprior = \"random\", nmodel = 2^15), exact = TRUE) gives the same PIPs, Post Mean and Post SD to 1e-9 (TestUScrimeBMS); with the default nmodel = 500, exact = TRUE averages over the best 500 models only"

// DefaultFLSMC3 are the settings of the FLS reference.
var DefaultFLSMC3 = mc3Settings{Chains: 4, Burn: 100_000, Steps: 20_000_000, Thin: 100, Batches: 100, Seed: 32}

// flsReference is the long-run MC³ g-prior posterior of FLS (2^41 models).
func flsReference(s mc3Settings, workers int) (*Reference, error) {
	d, names, err := realData(FLSFile)
	if err != nil {
		return nil, err
	}
	r, err := mc3Reference(d, s, workers)
	if err != nil {
		return nil, err
	}
	n, p := len(d.y), len(names)
	maxOf := func(v []float64) float64 { return floatsMax(v) }
	var freqGap float64
	for j := range p {
		freqGap = math.Max(freqGap, math.Abs(r.FreqPIP[j]-r.PIP[j]))
	}
	return &Reference{
		Problem: "FLS growth under Zellner's g-prior as BMS uses it (g = \"UIP\" = n, mprior = \"random\")",
		Data:    "select/" + FLSFile,
		N:       n,
		P:       p,
		Method: fmt.Sprintf("long run: %d MC³ chains (birth/death and swap moves, ½ each, on the closed-form g-prior evidence) of %d steps after %d of burn-in; "+
			"every %d steps the Rao-Blackwellised P(γ_j = 1 | γ_−j, y), E[β_j | γ_−j, y] and E[β_j² | γ_−j, y] for each j; standard errors from %d batch means per chain",
			s.Chains, s.Steps, s.Burn, s.Thin, s.Batches),
		Likelihood:   "y ~ N(α + Xβ, σ² I)",
		Prior:        map[string]any{"form": gPriorForm, "g": float64(n), "coefficients": gPriorCoef, "mc3": s},
		ModelPrior:   betaBinomial + " (BMS mprior = \"random\" with its default mprior.size = p/2)",
		Design:       "as in the file (BMS's datafls); the g-prior is invariant to the predictors' scale",
		Names:        names,
		PIP:          r.PIP,
		PIPSE:        r.PIPSE,
		CoefUnits:    "data units (per unit of each predictor as in the file)",
		CoefMean:     r.Mean,
		CoefMeanSE:   r.MeanSE,
		CoefSD:       r.SD,
		CoefSDSE:     r.SDSE,
		ExpectedSize: r.Size,
		TopModels:    r.Top,
		Diagnostics: map[string]any{
			"max_pip_se":                      maxOf(r.PIPSE),
			"max_coef_mean_se_over_sd":        maxRatio(r.MeanSE, r.SD),
			"acceptance_per_chain":            r.Acceptance,
			"max_chain_z":                     r.MaxChainZ,
			"max_abs_frequency_minus_rb_pip":  freqGap,
			"models_proposed":                 r.Visited,
			"top_models_note":                 "top_models' probabilities are renormalised over the models the chains proposed",
			"renormalised_mass_of_the_top_20": r.VisitedMass,
		},
		Program: "go run ./bench/selectref -real fls",
	}, nil
}

// maxRatio is max_j a_j / b_j over b_j > 0.
func maxRatio(a, b []float64) float64 {
	var m float64
	for j := range a {
		if b[j] > 0 {
			m = math.Max(m, a[j]/b[j])
		}
	}
	return m
}
