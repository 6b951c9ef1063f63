// Package trj compares Bayesian models of different dimensions in one call:
// Run takes a ppl.Space of the user's models and returns each model's
// posterior probability, estimated twice — by transport reversible-jump
// chains (with Monte Carlo standard errors from the chains' effective sample
// sizes) and by the Bartolucci bridge estimator (with jackknife standard
// errors over independent groups of pilot draws) — and, with SMC pilots, a
// third time from each model's evidence. Where the bridge estimate rests on
// too few accepted proposals (Bridge.Unreliable) the table reports a second
// estimate from the same proposals, whose standard errors hold there
// (Bridge.Reported); for a model the chains visit only a few times,
// pipeline.Estimate.Interval gives a score interval that stays sound where
// P ± z·MCSE does not.
//
// Run's stages follow Davies, Salomone, Sutton and Drovandi (2023),
// "Transport reversible jump proposals": pilot draws of every model (NUTS,
// SMC, draws made elsewhere, or a PilotMethod of the user's own), a family
// of between-model proposals fitted to half of them (Settings.Proposals: by
// default a transport per model, affine or RQMA flows chosen per model by
// held-out fit; or a conditional flow for CTRJ, the user's
// kernels.Transport values, independent auxiliaries, classic independence
// proposals, or a family of the user's own, any value of the Proposals
// interface), the bridge estimate from the other half, and TRJ or CTRJ
// chains whose jump probabilities are the bridge estimate, each step
// followed by a within-model move (NUTS, random walk, or a WithinMove of the
// user's own).
// Settings has one field per stage; nil settings take defaults chosen by
// measurement. RunFitted also returns what a run fitted (Fitted), for later
// runs to reuse.
package trj
