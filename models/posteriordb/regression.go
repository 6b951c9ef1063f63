package posteriordb

import (
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ppl"
)

const maxFloat = math.MaxFloat64

// Kilpisjarvi is posteriordb's kilpisjarvi (kilpisjarvi_mod): a linear
// trend of summer temperatures y on the year x, with data-given priors
//
//	α ~ normal(pmualpha, psalpha),  β ~ normal(pmubeta, psbeta),
//	y_n ~ normal(α + β·x_n, σ),
//
// and an improper flat prior on σ > 0. Parameters alpha, beta, sigma. The
// years are not centred, so α and β are almost perfectly correlated a
// posteriori. The data field xpred is not used.
func Kilpisjarvi(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "kilpisjarvi_mod-kilpisjarvi.json")
	n := l.integer("N", 0)
	x := l.vector("x", n)
	y := l.vector("y", n)
	pmuAlpha, psAlpha := l.number("pmualpha"), l.number("psalpha")
	pmuBeta, psBeta := l.number("pmubeta"), l.number("psbeta")
	if l.err == nil && !(psAlpha > 0 && psBeta > 0) {
		l.keep(l.d.errorf("prior scales psalpha = %v and psbeta = %v must be positive", psAlpha, psBeta))
	}
	if l.err != nil {
		return nil, l.err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	alpha := b.Real("alpha")
	beta := b.Real("beta")
	sigma := b.Positive("sigma") // flat prior: no Sample statement
	mu := g.add(alpha, g.mul(beta, b.Data("x", x)))
	b.Sample(ppl.Normal{Mu: pmuAlpha, Sigma: psAlpha}, alpha)
	b.Sample(ppl.Normal{Mu: pmuBeta, Sigma: psBeta}, beta)
	b.Sample(ppl.Normal{Mu: mu, Sigma: sigma}, b.Data("y", y))
	return b.Model()
}

// KidscoreInteraction is posteriordb's kidscore_interaction (kidiq): a
// child's test score on the mother's high-school completion and IQ with
// their interaction,
//
//	kid_score_n ~ normal(β₁ + β₂·hs_n + β₃·iq_n + β₄·hs_n·iq_n, σ),
//	σ ~ half-Cauchy(0, 2.5),
//
// with flat priors on β. Parameters beta (4), sigma. The data's bounds
// (scores and IQ in [0, 200], hs in [0, 1]) are checked; mom_hs_new and
// mom_iq_new are not used.
func KidscoreInteraction(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "kidiq-kidscore_interaction.json")
	n := l.integer("N", 0)
	score := l.boundedVector("kid_score", n, 0, 200)
	iq := l.boundedVector("mom_iq", n, 0, 200)
	hs := l.boundedVector("mom_hs", n, 0, 1)
	if l.err != nil {
		return nil, l.err
	}
	x := make([]float64, 0, 4*n)
	for i := 0; i < n; i++ {
		x = append(x, 1, hs[i], iq[i], hs[i]*iq[i])
	}
	b := ppl.NewBuilder()
	g := graph{b}
	beta := b.Real("beta", 4)
	sigma := b.Positive("sigma")
	mu := g.matVec(dataMatrix(b, "X", x, n, 4), beta)
	b.Sample(ppl.HalfCauchy{Scale: 2.5}, sigma)
	b.Sample(ppl.Normal{Mu: mu, Sigma: sigma}, b.Data("kid_score", score))
	return b.Model()
}

// BLR is posteriordb's blr (sblrc): Bayesian linear regression with a
// dense design,
//
//	β_d ~ normal(0, 10),  σ ~ half-normal(0, 10),  y ~ normal(Xβ, σ).
//
// Parameters beta (D), sigma.
func BLR(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "sblrc-blr.json")
	n, d := l.integer("N", 0), l.integer("D", 0)
	x := l.matrix("X", n, d)
	y := l.vector("y", n)
	if l.err != nil {
		return nil, l.err
	}
	b := ppl.NewBuilder()
	g := graph{b}
	beta := b.Real("beta", d)
	sigma := b.Positive("sigma")
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 10.0}, beta)
	b.Sample(ppl.HalfNormal{Sigma: 10.0}, sigma)
	b.Sample(ppl.Normal{Mu: g.matVec(b.DataMatrix("X", x), beta), Sigma: sigma}, b.Data("y", y))
	return b.Model()
}

// Diamonds is posteriordb's diamonds: a normal linear model of log price
// on K−1 centred predictors (brms's normal_id_glm),
//
//	b_k ~ normal(0, 1),  Intercept ~ student_t(3, 8, 10),
//	σ ~ half-student_t(3, 0, 10),  Y ~ normal(Intercept + X_c·b, σ),
//
// where X_c is X without its first (all-ones) column, each column centred
// on its mean, so Intercept is the intercept of the centred design.
// Parameters b (K−1), Intercept, sigma. With prior_only = 1 the likelihood
// is left out. The predictors are strongly correlated, so NUTS needs long
// trajectories.
//
// The likelihood is computed from sufficient statistics, exactly: since
// the columns of X_c sum to zero, the residual sum of squares is
//
//	Σ(Y − a − X_c b)² = Σ(Y − Ȳ)² + N(Ȳ − a)² − 2(X_cᵀY)ᵀb + bᵀ(X_cᵀX_c)b,
//
// so an evaluation costs a (K−1)² matrix–vector product instead of an
// N×(K−1) one.
func Diamonds(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "diamonds-diamonds.json")
	n, k := l.integer("N", 1), l.integer("K", 2)
	y := l.vector("Y", n)
	x := l.matrix("X", n, k)
	priorOnly := l.integer("prior_only", 0)
	if l.err != nil {
		return nil, l.err
	}
	xc := mat.NewDense(n, k-1, nil)
	for j := 1; j < k; j++ {
		col := mat.Col(nil, j, x)
		m := 0.0
		for _, v := range col {
			m += v
		}
		m /= float64(n)
		for i, v := range col {
			xc.Set(i, j-1, v-m)
		}
	}
	b := ppl.NewBuilder()
	g := graph{b}
	coef := b.Real("b", k-1)
	intercept := b.Real("Intercept")
	sigma := b.Positive("sigma")
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 1.0}, coef)
	b.Sample(ppl.StudentT{Nu: 3.0, Mu: 8.0, Sigma: 10.0}, intercept)
	// The half-t on σ > 0: Stan's − student_t_lccdf(0 | 3, 0, 10) = log 2.
	b.Sample(ppl.StudentT{Nu: 3.0, Mu: 0.0, Sigma: 10.0}, sigma)
	b.AddLogDensity(gorgonia.NewConstant(math.Ln2))
	if priorOnly != 0 {
		return b.Model()
	}
	yMean := 0.0
	for _, v := range y {
		yMean += v
	}
	yMean /= float64(n)
	syy := 0.0
	yc := make([]float64, n)
	for i, v := range y {
		yc[i] = v - yMean
		syy += yc[i] * yc[i]
	}
	var gram mat.SymDense
	gram.SymOuterK(1, xc.T())
	var xty mat.VecDense
	xty.MulVec(xc.T(), mat.NewVecDense(n, yc))

	gb := g.matVec(b.DataMatrix("XctXc", &gram), coef)
	quad := g.sum(g.mul(coef, g.sub(gb, g.mul(g.c(2), b.Data("XctY", xty.RawVector().Data)))))
	shift := g.sub(intercept, g.c(yMean))
	rss := g.add(g.add(g.c(syy), g.mul(g.c(float64(n)), g.square(shift))), quad)
	b.AddLogDensity(g.normalSumSq(rss, sigma, n))
	return b.Model()
}

// ArK is posteriordb's arK: an autoregression of order K,
//
//	α ~ normal(0, 10),  β_k ~ normal(0, 10),  σ ~ half-Cauchy(0, 2.5),
//	y_t ~ normal(α + Σ_k β_k·y_{t−k}, σ)  for t = K+1, …, T.
//
// Parameters alpha, beta (K), sigma. The lags form a constant design
// matrix, so the likelihood is one matrix–vector product.
func ArK(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "arK-arK.json")
	k, t := l.integer("K", 1), l.integer("T", 1)
	y := l.vector("y", t)
	if l.err == nil && t <= k {
		l.keep(l.d.errorf("T = %d must exceed K = %d", t, k))
	}
	if l.err != nil {
		return nil, l.err
	}
	lags := make([]float64, 0, (t-k)*k)
	for i := k; i < t; i++ {
		for j := 1; j <= k; j++ {
			lags = append(lags, y[i-j])
		}
	}
	b := ppl.NewBuilder()
	g := graph{b}
	alpha := b.Real("alpha")
	beta := b.Real("beta", k)
	sigma := b.Positive("sigma")
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 10.0}, alpha)
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 10.0}, beta)
	b.Sample(ppl.HalfCauchy{Scale: 2.5}, sigma)
	mu := g.add(alpha, g.matVec(dataMatrix(b, "lags", lags, t-k, k), beta))
	b.Sample(ppl.Normal{Mu: mu, Sigma: sigma}, b.Data("y", y[k:]))
	return b.Model()
}
