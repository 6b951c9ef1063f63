package posteriordb

import (
	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// gpJitter is the diagonal added to the covariance before its Cholesky
// factorisation, as in the Stan program.
const gpJitter = 1e-10

// GPPoisRegr is posteriordb's gp_pois_regr: Poisson counts with a latent
// Gaussian process on the log rate, non-centred,
//
//	K_ij = α² exp(−(x_i − x_j)² / (2ρ²)) + 10⁻¹⁰·δ_ij,
//	f = chol(K)·f̃,  f̃ ~ normal(0, 1),
//	ρ ~ gamma(25, 4) (shape, rate),  α ~ half-normal(0, 2),
//	k_n ~ poisson_log(f_n).
//
// Parameters rho, alpha, f_tilde (N); transformed parameter f (N). The data
// field y belongs to another posterior and is not used. A covariance that
// is numerically not positive definite is reported as an error by the
// Cholesky op, which samplers treat as a rejection.
func GPPoisRegr(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "gp_pois_regr-gp_pois_regr.json")
	n := l.integer("N", 1)
	x := l.vector("x", n)
	k := l.counts("k", n)
	if l.err != nil {
		return nil, l.err
	}
	// −(x_i − x_j)²/2 and the jitter, fixed parts of K.
	negHalfD2 := make([]float64, n*n)
	jitter := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d := x[i] - x[j]
			negHalfD2[i*n+j] = -0.5 * d * d
		}
		jitter[i*n+i] = gpJitter
	}
	b := ppl.NewBuilder()
	g := graph{b}
	rho := b.Positive("rho")
	alpha := b.Positive("alpha")
	fTilde := b.Real("f_tilde", n)
	invRho2 := g.div(g.c(1), g.square(rho))
	cov := g.mul(g.square(alpha), g.exp(g.mul(invRho2, dataMatrix(b, "neg_half_d2", negHalfD2, n, n))))
	cov = g.add(cov, dataMatrix(b, "jitter", jitter, n, n))
	f := g.matVec(b.Check(ops.Cholesky(cov)), fTilde)
	b.Report("f", f)
	b.Sample(ppl.Gamma{Shape: 25.0, Rate: 4.0}, rho)
	b.Sample(ppl.HalfNormal{Sigma: 2.0}, alpha)
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 1.0}, fTilde)
	b.Sample(ppl.PoissonLog{LogRate: f}, b.Data("k", k))
	return b.Model()
}
