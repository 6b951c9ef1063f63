// Package posteriordb holds reference posteriors of the posteriordb
// collection (https://github.com/stan-dev/posteriordb), written with the
// public ppl API as any user's model would be.
//
// Each constructor takes the path of the posterior's data set, the
// posteriordb JSON file (a JSON object of named scalars, vectors and
// matrices in Stan's data format), and returns a *ppl.GraphModel. An empty
// path means the posterior's own data set, which ships with trj in package
// models/datasets as posteriordb/DATA-MODEL.json. The models follow the
// posteriordb Stan programs: same parameters in the same order, same
// constraints and the same posterior. Draws are reported on the constrained scale with
// Stan-style names (theta.1, theta.2, …), parameters first, then
// transformed parameters.
//
// Densities are normalised where Stan's ~ statement drops constants (a
// half-Cauchy prior on a positive scale includes its factor 2, say), so
// lp__ differs from Stan's by a constant; the posterior is the same.
//
// Recursions (ARMA errors, GARCH volatilities, the HMM forward algorithm)
// are unrolled into scalar graph nodes, with the data entering as scalar
// constants rather than as slices of a vector node: the gradient of a
// slice is a full-length vector, so slicing inside a T-step recursion
// would make the gradient cost O(T²). The graphs have a few thousand
// scalar nodes, which ad compiles into a flat list of instructions.
// Diamonds' likelihood is written with its sufficient statistics (X_cᵀX_c,
// X_cᵀY), exactly, which makes an evaluation a thousand times cheaper.
// The 29 linear regressions (earnings, kidiq, mesquite, nes, sblri) share
// one builder: each constructor writes its design's columns from the data,
// as the Stan program's transformed data do, and the likelihood is one fused
// ops.NormalIDGLM. A data set shared by several posteriors is embedded once,
// as posteriordb/DATA.json.
// The Lotka–Volterra model solves its differential equations with
// ad/ops.ODESolve, whose gradient comes from forward sensitivities.
package posteriordb
