// Package selection answers "which of my p candidate terms matter?": Run
// samples the 2ᵖ models of a ppl.SelectionSpace with chains of the
// transdimensional selection kernel (kernels.SelectionKernel: add, drop or
// swap one term, the parameters carried across by each model's transport,
// then within-model moves), building each model when a chain first visits
// it. Its Result gives every term's posterior inclusion probability ±
// MCSE with R̂ and ESS, the expected model size and the most visited
// models.
//
// The transports come from a Proposal family, a value with one file each:
// FullConditional (the default), Laplace, Global, Identity, Amortised and
// CTRJ; a family of one's own implements Proposal in a file of its own.
//
// Package selection stands on the same layer as trj.Run, which answers
// "which of my K models?": estimates, progress, seeds and streams, settings
// bounds, output folders, shard plans and merges follow the rules of
// package pipeline and internal/runs.
package selection
