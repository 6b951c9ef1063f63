// Package glmselect builds the variable-selection spaces of generalised
// linear models from an n×p matrix of candidate predictors: Gaussian
// (linear regression with the conjugate normal-inverse-gamma prior),
// Logistic and Poisson. Each returns a *ppl.SelectionSpace of 2^p models,
// the intercept always in, for selection.Run.
//
// Predictors are standardised by default (each column centred and scaled
// to unit standard deviation), so that one prior scale suits every
// coefficient; the priors are documented on each builder's settings.
//
// NIG gives the closed-form log evidence of a Gaussian model, the exact
// reference that tests the transdimensional machinery, and ExactNIG the
// exact posterior inclusion probabilities of a space small enough to
// enumerate (p up to about 24).
package glmselect
