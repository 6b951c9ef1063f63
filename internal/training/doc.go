// Package training holds the pieces of a minibatch maximum-likelihood fit
// that do not depend on the model being fitted: the checks and
// standardisation of the data, the learning-rate and batch-size schedules,
// the validation split and weighted minibatch draws, the Adam update and
// early stopping on window means. Package flows trains its flows with
// them, and the benchmarks' frozen hand-written flow uses the same pieces
// so that the two differ only in how they evaluate the loss and its
// gradient.
package training
