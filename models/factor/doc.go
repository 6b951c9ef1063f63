// Package factor is the Bayesian factor-analysis experiment of the
// paper's §4.3, after Lopes and West (2004): choosing between 2 and 3
// factors for six monthly exchange rates (143 observations).
//
// # Model
//
// With k factors the observations y_i ∈ R^p (p = 6) are independent,
//
//	y_i ~ N(0, BBᵀ + Λ),
//
// B a p×k lower-triangular loadings matrix with a positive diagonal and Λ a
// positive diagonal matrix, with priors
//
//	β_ij ~ N(0, 1) (i > j),   β_jj ~ N⁺(0, 1),   Λ_ii ~ IG(1.1, 0.05),
//
// and equal prior model probabilities. The model has p(k+1) − k(k−1)/2
// parameters (17 and 21). NewModel builds it with package ppl
// (CholeskyFactorCov, MvNormal on the sufficient statistics), so the
// sampler sees the unconstrained vector u = (log β_jj, β_ij (i > j, row by
// row), log Λ_ii) — the "parameters first mapped to the real line" of the
// paper — and the density includes every normalising constant and
// log-Jacobian. NewSpace puts the two models in a ppl.Space labelled "2"
// and "3". The reference answer is π(2 factors | y) ≈ 0.88 (Lopes and
// West 2004).
//
// # Pilot draws
//
// The 2-factor posterior has two modes: the factor-2 loadings of variables
// 3–6 are all positive (weight ≈ 0.78) or all negative, because β_22 — the
// only loading that fixes their sign — is close to zero. NUTS chains do
// not cross between them, so the pilots are adaptive-tempering SMC runs
// from the exact prior (kernels.RunSMC with TemperedFactory), which also
// estimate each model's evidence. The modes are not connected on the
// unconstrained scale (log β_22 would have to pass −∞), so their weights
// are set by the tempering itself: DefaultConfig keeps the conditional ESS
// at 0.9·N per temperature rather than the paper's 0.5·N, which left the
// weight of the larger mode anywhere between 0.31 and 0.95 over eight
// seeds. The particles are then moved by a few NUTS transitions (trj's
// pilot refresh), because SMC's last resampling leaves clusters of
// near-copies.
//
// # Proposals
//
// TRJ uses per-model affine or RQMA flows (the paper's factor-analysis
// variant: sigmoid scale √(8/π), minibatch 32, validation-based early
// stopping; DefaultConfig decays the learning rate more slowly, since the
// paper's schedule stops learning before the flows beat the affine ones
// on held-out draws) on the unconstrained scale, with the map h̄ of
// Alignment that keeps each shared parameter on its own reference
// coordinate and puts the auxiliaries on the new loadings. The baseline is the Lopes–West
// independence proposal q_k(θ) = N(β; μ_β, 2B) Π IG(Λ_ii; 18, 18υ_i²),
// its Gaussian part on the loadings themselves (draws with β_jj ≤ 0 are
// outside the support and rejected), run as trj's independence
// proposals (trj.Independence).
//
// # Experiment
//
// Run calls trj.Run once per proposal type (Settings gives its settings),
// the first run's SMC pilots reused by the others: independent runs per
// model, half training the proposals and half evaluating them, the bridge
// estimate's jackknife standard error taken over the evaluation runs;
// RJMCMC chains alternate a jump and a within-model random walk
// N(0, 2.38²/n_k·Σ̂_k) on the unconstrained (log) scale. WriteFigures
// draws the running estimates, violins of the evaluation groups' bridge
// estimates and proposals into the 3-factor model on selected bivariate
// marginals. The bridge study (RunPair, `trj study factor`) keeps its own
// pipeline (RunPilot, FitProposals): its replicates share one evaluation
// set by design.
package factor
