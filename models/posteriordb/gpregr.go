package posteriordb

import (
	"math"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// GPRegr is posteriordb's gp_pois_regr-gp_regr: Gaussian-process
// regression of the continuous responses y of the gp_pois_regr data with
// the latent function integrated out,
//
//	K_ij = α² exp(−(x_i − x_j)² / (2ρ²)) + σ·δ_ij,
//	ρ ~ gamma(25, 4) (shape, rate),  α ~ half-normal(0, 2),  σ ~ half-normal(0, 1),
//	y ~ multi_normal(0, K) through the Cholesky factor of K.
//
// As in the Stan program, σ is added to the diagonal as it is (a variance,
// despite its name). Parameters rho, alpha, sigma. The counts k belong to
// another posterior and are not used.
func GPRegr(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "gp_pois_regr-gp_regr.json")
	n := l.integer("N", 1)
	x := l.vector("x", n)
	y := l.vector("y", n)
	if l.err != nil {
		return nil, l.err
	}
	negHalfD2 := make([]float64, n*n)
	eye := make([]float64, n*n)
	for i := range n {
		for j := range n {
			d := x[i] - x[j]
			negHalfD2[i*n+j] = -0.5 * d * d
		}
		eye[i*n+i] = 1
	}
	b := ppl.NewBuilder()
	g := graph{b}
	rho := b.Positive("rho")
	alpha := b.Positive("alpha")
	sigma := b.Positive("sigma")
	invRho2 := g.div(g.c(1), g.square(rho))
	cov := g.mul(g.square(alpha), g.exp(g.mul(invRho2, dataMatrix(b, "neg_half_d2", negHalfD2, n, n))))
	cov = g.add(cov, g.mul(sigma, dataMatrix(b, "identity", eye, n, n)))
	lCov := b.Check(ops.Cholesky(cov))
	b.Sample(ppl.Gamma{Shape: 25.0, Rate: 4.0}, rho)
	b.Sample(ppl.HalfNormal{Sigma: 2.0}, alpha)
	b.Sample(ppl.HalfNormal{Sigma: 1.0}, sigma)
	b.Sample(ppl.MvNormal{Mu: 0.0, L: lCov}, b.Data("y", y))
	return b.Model()
}

// AccelGP is posteriordb's mcycle_gp-accel_gp: the motorcycle-crash head
// accelerations Y (MASS's mcycle) against time, as brms writes a
// distributional model with two approximate Gaussian processes, one for
// the mean and one for the log standard deviation. Each is a Hilbert-space
// basis-function approximation: with the basis matrix X (N × M, the
// Laplacian's eigenfunctions at the times) and the square roots s_m of its
// eigenvalues (data), for standard deviation α and length-scale ℓ,
//
//	f = X (√S ⊙ z),  S_m = α² √(2π) ℓ exp(−ℓ² s_m² / 2),  z ~ normal(0, 1),
//
// S being the squared-exponential kernel's spectral density. The model is
//
//	μ = b + f(α, ℓ, z) (40 basis functions),  log σ = b_σ + f_σ(α_σ, ℓ_σ, z_σ) (20),
//	b ~ student_t(3, −13, 36),  b_σ ~ student_t(3, 0, 10),
//	α, α_σ ~ half-student_t(3, 0, 36),  ℓ, ℓ_σ ~ inv_gamma(1.124909, 0.0177),
//	Y_n ~ normal(μ_n, σ_n).
//
// Parameters Intercept, sdgp_1, lscale_1, zgp_1 (40), Intercept_sigma,
// sdgp_sigma_1, lscale_sigma_1, zgp_sigma_1 (20), in the program's order;
// the program's copies of them (vsdgp_1, b_Intercept, …) are not
// reported. The data field prior_only = 1 drops the likelihood, as in brms.
func AccelGP(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "mcycle_gp-accel_gp.json")
	n := l.integer("N", 1)
	y := l.vector("Y", n)
	for _, f := range []string{"Kgp_1", "Dgp_1", "Kgp_sigma_1", "Dgp_sigma_1"} {
		if k := l.integer(f, 1); l.err == nil && k != 1 {
			l.keep(l.d.errorf("%s = %d: this model is written for one one-dimensional GP", f, k))
		}
	}
	m := l.integer("NBgp_1", 1)
	ms := l.integer("NBgp_sigma_1", 1)
	x := l.matrix("Xgp_1", n, m)
	xs := l.matrix("Xgp_sigma_1", n, ms)
	sl := l.matrix("slambda_1", m, 1)
	sls := l.matrix("slambda_sigma_1", ms, 1)
	priorOnly := l.integer("prior_only", 0)
	if l.err != nil {
		return nil, l.err
	}
	if priorOnly > 1 {
		return nil, l.d.errorf("prior_only = %d, want 0 or 1", priorOnly)
	}
	b := ppl.NewBuilder()
	g := graph{b}
	intercept := b.Real("Intercept")
	sd := b.Positive("sdgp_1")
	ls := b.Positive("lscale_1")
	z := b.Real("zgp_1", m)
	interceptS := b.Real("Intercept_sigma")
	sdS := b.Positive("sdgp_sigma_1")
	lsS := b.Positive("lscale_sigma_1")
	zS := b.Real("zgp_sigma_1", ms)

	// The half-t priors' normalising factor 1/P(t > 0) = 2, as the program
	// includes it.
	const logTwo = math.Ln2
	b.Sample(ppl.StudentT{Nu: 3.0, Mu: -13.0, Sigma: 36.0}, intercept)
	b.Sample(ppl.StudentT{Nu: 3.0, Mu: 0.0, Sigma: 36.0}, sd)
	b.AddLogDensity(g.c(logTwo))
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 1.0}, z)
	b.Sample(ppl.InverseGamma{Shape: 1.124909, Scale: 0.0177}, ls)
	b.Sample(ppl.StudentT{Nu: 3.0, Mu: 0.0, Sigma: 10.0}, interceptS)
	b.Sample(ppl.StudentT{Nu: 3.0, Mu: 0.0, Sigma: 36.0}, sdS)
	b.AddLogDensity(g.c(logTwo))
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 1.0}, zS)
	b.Sample(ppl.InverseGamma{Shape: 1.124909, Scale: 0.0177}, lsS)
	if priorOnly == 1 {
		return b.Model()
	}
	mu := g.add(intercept, g.basisGP(b.DataMatrix("Xgp_1", x), sl.RawMatrix().Data, "slambda2_1", sd, ls, z))
	logSigma := g.add(interceptS, g.basisGP(b.DataMatrix("Xgp_sigma_1", xs), sls.RawMatrix().Data, "slambda2_sigma_1", sdS, lsS, zS))
	b.Sample(ppl.Normal{Mu: mu, Sigma: g.exp(logSigma)}, b.Data("Y", y))
	return b.Model()
}

// basisGP is the approximate Gaussian process X (√S ⊙ z) of AccelGP, with
// √S_m = α (2π)^¼ √ℓ exp(−ℓ² s_m² / 4) written on the log scale.
func (g graph) basisGP(x *gorgonia.Node, slambda []float64, name string, alpha, ell, z *gorgonia.Node) *gorgonia.Node {
	negQuarterS2 := make([]float64, len(slambda))
	for i, s := range slambda {
		negQuarterS2[i] = -0.25 * s * s
	}
	// log √S_m = log α + ¼ log 2π + ½ log ℓ − ℓ² s_m² / 4.
	logScale := g.add(g.log(alpha), g.add(g.c(0.25*math.Log(2*math.Pi)), g.mul(g.c(0.5), g.log(ell))))
	logSqrtS := g.add(logScale, g.mul(g.square(ell), g.b.Data(name, negQuarterS2)))
	return g.matVec(x, g.mul(g.exp(logSqrtS), z))
}
