package main

import (
	"fmt"
	"math"
)

// Files in models/datasets/select.
const (
	LinearFile      = "linear_p20.csv"
	LogisticFile    = "logistic_p15.csv"
	LinearNIGRef    = "linear_p20_nig_exact.json"
	LinearGPriorRef = "linear_p20_gprior_exact.json"
	LogisticRef     = "logistic_p15_is.json"
)

// DefaultNIG is the prior of the linear reference: trj's default for the
// Gaussian family (glmselect.DefaultG, DefaultA, DefaultB; a test checks
// they agree).
var DefaultNIG = NIGPrior{G: 1, A: 0.01, B: 0.01}

// DefaultLogit is the prior of the logistic reference: trj's default for
// the logistic family (glmselect.DefaultInterceptSD, DefaultPriorSD).
var DefaultLogit = LogitPrior{S0: 10, S: 2.5}

// Reference is one reference posterior over models as stored in JSON.
type Reference struct {
	Problem    string         `json:"problem"`
	Data       string         `json:"data"`
	N          int            `json:"n"`
	P          int            `json:"p"`
	Method     string         `json:"method"`
	Likelihood string         `json:"likelihood"`
	Prior      map[string]any `json:"prior"`
	ModelPrior string         `json:"model_prior"`
	Design     string         `json:"design"`
	Names      []string       `json:"names,omitempty"`
	PIP        []float64      `json:"pip"`
	PIPSE      []float64      `json:"pip_se"`
	// The model-averaged posterior mean and standard deviation of each
	// coefficient (zero in the models without it), in the units of
	// CoefUnits, with their standard errors (zero for exact answers).
	CoefUnits    string         `json:"coef_units,omitempty"`
	CoefMean     []float64      `json:"coef_mean,omitempty"`
	CoefMeanSE   []float64      `json:"coef_mean_se,omitempty"`
	CoefSD       []float64      `json:"coef_sd,omitempty"`
	CoefSDSE     []float64      `json:"coef_sd_se,omitempty"`
	ExpectedSize float64        `json:"expected_size"`
	TopModels    []topModel     `json:"top_models"`
	Diagnostics  map[string]any `json:"diagnostics,omitempty"`
	Program      string         `json:"program"`
}

const betaBinomial = "beta-binomial(1,1) on the model size: p(γ) = 1/((p+1)·C(p,|γ|))"

func linearNIGReference(d dataset, pr NIGPrior) (*Reference, error) {
	ds := standardise(d)
	gr := newGram(ds)
	buf, v := newBuf(ds.p + 1)
	e, err := enumerate(ds.p, true, func(cols []int) float64 {
		return nigLogEvidence(gr, ds.n, pr, cols, buf, v)
	}, 20)
	if err != nil {
		return nil, err
	}
	return &Reference{
		Problem:    "linear_p20 under the normal-inverse-gamma prior",
		Data:       "select/" + LinearFile,
		N:          ds.n,
		P:          ds.p,
		Method:     fmt.Sprintf("exact: all %d models enumerated with the closed-form evidence (per-model Cholesky)", 1<<ds.p),
		Likelihood: "y ~ N(Xβ, σ² I), X = [1, standardised predictors of the model]",
		Prior: map[string]any{
			"form": "every coefficient, intercept included, β | σ² ~ N(0, σ² g I); σ² ~ InverseGamma(a, b)",
			"g":    pr.G, "a": pr.A, "b": pr.B,
		},
		ModelPrior:   betaBinomial,
		Design:       "predictors centred and scaled to unit sample sd (divisor n−1); y as in the file",
		PIP:          e.PIP,
		PIPSE:        make([]float64, ds.p),
		ExpectedSize: e.ExpectedSize,
		TopModels:    e.Top,
		Diagnostics:  map[string]any{"log_evidence_total": e.LogZ},
		Program:      "go run ./bench/selectref -linear",
	}, nil
}

func linearGPriorReference(d dataset) (*Reference, error) {
	n, p := len(d.y), len(d.x[0])
	gc := centredGram(d)
	buf, v := newBuf(p + 1)
	g := float64(n) // BMS's g = "UIP"
	e, err := enumerate(p, false, func(cols []int) float64 {
		return gPriorLogEvidence(gc, n, g, cols, buf, v)
	}, 20)
	if err != nil {
		return nil, err
	}
	return &Reference{
		Problem:    "linear_p20 under Zellner's g-prior as BMS uses it (g = \"UIP\", mprior = \"random\")",
		Data:       "select/" + LinearFile,
		N:          n,
		P:          p,
		Method:     fmt.Sprintf("exact: all %d models enumerated with the closed-form g-prior evidence", 1<<p),
		Likelihood: "y ~ N(α + Xβ, σ² I)",
		Prior: map[string]any{
			"form": "β | σ² ~ N(0, σ² g (XcᵀXc)⁻¹) on the centred predictors Xc; flat prior on α and log σ; evidence ∝ (1+g)^((n−1−k)/2) (1+g(1−R²))^(−(n−1)/2)",
			"g":    g,
		},
		ModelPrior:   betaBinomial + " (BMS mprior = \"random\" with its default mprior.size = p/2)",
		Design:       "as in the file (the g-prior is invariant to the predictors' scale)",
		PIP:          e.PIP,
		PIPSE:        make([]float64, p),
		ExpectedSize: e.ExpectedSize,
		TopModels:    e.Top,
		Program:      "go run ./bench/selectref -linear",
	}, nil
}

func logisticReference(d dataset, pr LogitPrior, s isSettings, workers int) (*Reference, error) {
	ds := standardise(d)
	r, err := logisticEnumerate(ds, pr, s, workers)
	if err != nil {
		return nil, err
	}
	maxSE := 0.0
	for _, v := range r.PIPSE {
		maxSE = math.Max(maxSE, v)
	}
	return &Reference{
		Problem:    "logistic_p15",
		Data:       "select/" + LogisticFile,
		N:          ds.n,
		P:          ds.p,
		Method:     fmt.Sprintf("importance sampling: the evidence of each of the %d models whose Laplace posterior probability exceeds %g (of %d) from %d draws of a multivariate t (%g degrees of freedom) centred at the posterior mode (Newton) with the inverse negative Hessian as scale; the other models keep their Laplace evidence (their total probability is in diagnostics); PIP standard errors by the delta method over the independent per-model estimates", r.Sampled, isThreshold, 1<<ds.p, s.Draws, s.Nu),
		Likelihood: "y ~ Bernoulli(logit⁻¹(Xβ)), X = [1, standardised predictors of the model]",
		Prior: map[string]any{
			"form":     "intercept ~ N(0, s0²); each coefficient ~ N(0, s²)",
			"s0":       pr.S0,
			"s":        pr.S,
			"is_seed":  s.Seed,
			"is_draws": s.Draws,
			"t_dof":    s.Nu,
		},
		ModelPrior:   betaBinomial,
		Design:       "predictors centred and scaled to unit sample sd (divisor n−1); y in {0,1}",
		PIP:          r.PIP,
		PIPSE:        r.PIPSE,
		ExpectedSize: r.ExpectedSize,
		TopModels:    r.Top,
		Diagnostics: map[string]any{
			"max_pip_se":                                    maxSE,
			"max_relative_se_of_an_evidence":                r.MaxRelSE,
			"max_relative_se_of_an_evidence_with_prob>1e-4": r.MaxRelSEMass,
			"max_abs_log_laplace_minus_is_with_prob>1e-4":   r.MaxLaplaceGap,
			"models_importance_sampled":                     r.Sampled,
			"laplace_probability_of_the_models_not_sampled": r.RestLaplaceMass,
		},
		Program: "go run ./bench/selectref -logistic",
	}, nil
}
