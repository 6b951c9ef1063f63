// Package ppl is trj's model-building API: named parameters with constraints
// and their log-Jacobians, distributions as gorgonia graph builders, the Model
// interface that samplers consume, and transdimensional model spaces.
//
// # Building a model
//
// A Builder owns a gorgonia graph. Declaring a parameter returns its
// constrained value as a node; data are bound with Data; Sample adds a
// distribution's log-density (Stan's ~) and AddLogDensity any other term
// (Stan's target +=); Check records the error of an inline gorgonia call;
// Report names derived quantities. Model compiles the graph with
// ad.Compile:
//
//	b := ppl.NewBuilder()
//	mu, tau := b.Real("mu"), b.Positive("tau")
//	eta := b.Real("eta", 8)
//	theta := b.Check(gorgonia.Add(mu, b.Check(gorgonia.Mul(tau, eta))))
//	b.Sample(ppl.Normal{Mu: theta, Sigma: sigma}, y)
//	m, err := b.Model()
//
// Builder methods keep the first error (bad names, shapes, NaN data, …),
// prefixed with the file:line of the model code that caused it, and
// Model returns it, so model code needs no error checks. Parameters without
// a Sample statement have an improper flat prior.
//
// # Constraints
//
// Parameters live on an unconstrained space R^n, mapped to their support
// with Stan's transforms, each adding its log-Jacobian to the density:
//
//	Real                 x = u
//	Lower, Positive      x = lo + exp(u)
//	Upper                x = hi − exp(u)
//	Interval             x = lo + (hi − lo)·logistic(u)
//	Ordered              x₁ = u₁, x_i = x_{i−1} + exp(u_i)
//	PositiveOrdered      x_i = x_{i−1} + exp(u_i), x₀ = 0
//	Simplex              x = softmax(u₁, …, u_{K−1}, 0)  (additive log-ratio)
//	CholeskyFactorCov    lower-triangular, diagonal exp(u), zeros above
//	UnitLowerTriangular  lower-triangular, unit diagonal
//	CholeskyFactorCorr   Cholesky factor of a correlation matrix: partial
//	                     correlations tanh(u), rows of unit length
//
// Bounds may be nodes of earlier parameters (beta in (0, 1 − alpha)). The
// unconstrained vector is the parameters' coordinates in declaration order.
//
// # Names
//
// ParamNames are CmdStan-style: a scalar mu, a vector theta.1 …, a matrix
// B.1.1, B.1.2, … in row-major order, indices from one; the declared
// parameters come first, then the reported quantities.
//
// # Distributions
//
// Distributions are plain structs whose fields are Operands: float64,
// []float64, mat.Matrix or *gorgonia.Node, each a scalar or of the
// observation's shape. Densities are normalised: terms that involve no
// parameter (data, constants, lgamma of a fixed shape) are computed once in
// Go and kept, since model comparison needs them. LogProbs gives one value
// per observation, which Mixture combines with a stable log-sum-exp.
// Constant parameters are checked against their domain when the graph is
// built, so that a bad value is an error naming it, not a NaN at run time.
//
// The distributions, with Stan's names:
//
//	continuous        Normal, HalfNormal, LogNormal, StudentT, Cauchy,
//	                  HalfCauchy, Exponential, Gamma, InverseGamma, Beta,
//	                  Uniform, Weibull, Laplace (double_exponential),
//	                  Logistic, VonMises
//	counts            BernoulliProb (bernoulli), BernoulliLogit, Binomial,
//	                  BinomialLogit, Poisson, PoissonLog, NegBinomial2
//	                  (neg_binomial_2), NegBinomial2Log, NegBinomial
//	                  (neg_binomial), BetaBinomialCounts (beta_binomial)
//	categories        Categorical, CategoricalLogit, Multinomial,
//	                  MultinomialLogit (categories numbered from one)
//	multivariate      MvNormal, MvStudentT (multi_student_t), Dirichlet
//	                  (on a Simplex parameter or data rows), LKJCholesky
//	                  (lkj_corr_cholesky, on a CholeskyFactorCorr parameter)
//	mixtures          Mixture, HMM (hmm_marginal: a sequence whose hidden
//	                  states are summed out by ops.HMMMarginal)
//
// The discrete distributions need data observations; Bernoulli and
// BetaBinomial are the model priors of a SelectionSpace, hence the
// names BernoulliProb and BetaBinomialCounts.
//
// Diag, StrictlyLower and DiagMatrix take structured parameters apart and
// put covariances together, e.g. separate priors on the diagonal and the
// lower triangle of factor loadings B and Σ = BBᵀ + diag(λ).
//
// # Prior and likelihood
//
// GraphModel.Tempered splits a model's log-density into a prior part (the
// Sample statements on parameters and the log-Jacobians) and a likelihood
// part (everything else), with a sampler of the prior part, which is what
// sequential Monte Carlo (kernels.RunSMC) needs to estimate the evidence.
// When the priors cannot be drawn from directly, the prior part is a
// reference distribution instead; TemperedModel documents both forms.
//
// # Model spaces
//
// A Space is a finite set of Models with prior model probabilities and
// labels (indicator vectors "1,0,1,1"); it gives log π(k, θ_k) and the
// saturated target of CTRJ on R^{n_max}, with an explicit position map and
// active mask per model.
//
// Parameters common to all models, such as the noise scale of every
// regression in a variable selection, are declared last in every model and
// announced with WithShared(n): they take the last n saturated positions in
// every model, and indicator vectors and position maps describe only the
// models' own coordinates:
//
//	// models[k] declares beta (ones of ind[k] coordinates), then sigma
//	s, err := ppl.NewSpace(models, ppl.WithIndicators(ind),
//		ppl.WithPositions(ppl.IndicatorPositions(ind)), ppl.WithShared(1))
//
// # Variable selection
//
// A SelectionSpace is the space of the 2^P models of a variable selection,
// too many to build: a BuildFunc declares the model of a given set of
// active terms (a Terms bitset), and the space builds models only when
// asked, keeping a bounded least-recently-used cache, so that memory grows
// with the models visited. Each model declares its always-in parameters
// first, then one coordinate per active term in increasing term index, then
// the shared parameters (WithSelectionShared):
//
//	sp, err := ppl.NewSelectionSpace(p, func(b *ppl.Builder, t ppl.Terms) error {
//		beta := b.Real("beta", 1+t.Count()) // intercept, then the active terms
//		...
//		return nil
//	}, ppl.WithModelPrior(ppl.BetaBinomial{A: 1, B: 1}))
//
// When every model is the full model with some terms switched off, as in a
// regression, NewMaskedSelectionSpace compiles that saturated model once,
// with the mask of active terms as an input, and each model is a cheap view
// of it; the build function multiplies each term's coefficient (where it
// enters the likelihood) and its prior log-density by the term's mask
// entry:
//
//	sp, err := ppl.NewMaskedSelectionSpace(p, func(b *ppl.Builder, mask *gorgonia.Node) error {
//		beta := b.Real("beta", p)
//		lp := b.Check(ppl.Normal{Mu: 0.0, Sigma: 2.5}.LogProbs(beta))
//		b.AddLogDensity(b.Check(gorgonia.HadamardProd(lp, mask)))
//		bm := b.Check(gorgonia.HadamardProd(beta, mask)) // the coefficients in the likelihood
//		...
//		return nil
//	})
package ppl
