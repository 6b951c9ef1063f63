// Package glmselect builds the variable-selection spaces of generalised
// linear models from an n×p matrix of candidate predictors: Gaussian
// (linear regression with Zellner's g-prior by default, or BRIC, hyper-g,
// hyper-g/n, Zellner–Siow or the normal-inverse-gamma prior),
// Logistic and Poisson. Each returns a *ppl.SelectionSpace of 2^p models,
// the intercept always in, for selection.Run.
//
// Predictors are centred by default and kept in their units, so that each
// coefficient is per unit of its predictor; priors stated on standardised
// predictors scale each coefficient's prior by 1/sd_j instead, the same
// model. The priors are documented on each builder and on Settings.
//
// ReadData reads a data file as users have it (CSV or TSV, a header row,
// R's row names, text columns as 0/1 terms, Yes/No responses, a policy
// for missing values) into the matrix, response and names the builders
// take; Data.Encode encodes new rows the same way for Settings.Predict.
//
// Evidence gives the closed-form log evidence of a Gaussian model under
// any of its priors, the exact reference that tests the transdimensional
// machinery, and its Enumerate the exact posterior inclusion probabilities
// and coefficient moments of a space small enough to enumerate (p up to
// about 24).
package glmselect
