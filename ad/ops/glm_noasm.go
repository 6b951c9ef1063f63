//go:build !amd64 || purego

package ops

// haveAVX2FMA is false where the assembly row kernels do not exist.
const haveAVX2FMA = false

// dotRows sets out[i] = x[i*d:(i+1)*d]·beta for every i < len(out).
func dotRows(x []float64, d int, beta, out []float64) { dotRowsGo(x, d, beta, out) }

// axpyRows adds Σ_i r[i]·x[i*d:(i+1)*d] to g[:d] over every i < len(r).
func axpyRows(x []float64, d int, r, g []float64) { axpyRowsGo(x, d, r, g) }

// bernoulliLogitBlock returns Σ y_i η_i − log(1 + e^η_i) over a block of
// at most glmBlock rows and replaces each η_i by y_i − σ(η_i).
func bernoulliLogitBlock(eta, y []float64) (float64, error) { return bernoulliLogitBlockGo(eta, y) }

// poissonLogBlock returns Σ y_i η_i − e^η_i and replaces each η_i by
// y_i − e^η_i.
func poissonLogBlock(eta, y []float64) float64 { return poissonLogBlockGo(eta, y) }
