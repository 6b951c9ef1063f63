package main

import (
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/models/factor"
)

// symMix is a mixture of multivariate t's on θ symmetrised over the 2^k
// column sign flips: q(θ) = 2^−k Σ_s Σ_g w_g t_g(s·θ), s running over the
// flips. The posterior on θ has the same symmetry, so q covers every sign
// copy with the weight the posterior gives it, whatever copies the draws
// it was fitted to came from.
type symMix struct {
	comps []*mvt
	logw  []float64
	lay   factor.Layout
	rng   *rand.Rand
	buf   []float64
	lps   []float64
	z     []float64
}

func newSymMix(lay factor.Layout, comps []*mvt, w []float64, seed, stream uint64) *symMix {
	q := &symMix{
		comps: comps, lay: lay, rng: rand.New(rand.NewPCG(seed, stream)),
		buf: make([]float64, lay.Dim()), lps: make([]float64, len(comps)<<lay.K), z: make([]float64, lay.Dim()),
	}
	sum := floats.Sum(w)
	for _, v := range w {
		q.logw = append(q.logw, math.Log(v/sum))
	}
	return q
}

// stream returns a copy with its own random stream, for one worker.
func (q *symMix) stream(seed, s uint64) *symMix {
	return newSymMix(q.lay, q.comps, expAll(q.logw), seed, s)
}

func expAll(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Exp(v)
	}
	return out
}

// Rand draws θ from q.
func (q *symMix) Rand(theta []float64) {
	u, g := q.rng.Float64(), 0
	for c := 0.0; g < len(q.logw)-1; g++ {
		if c += math.Exp(q.logw[g]); u < c {
			break
		}
	}
	q.comps[g].rand(q.rng, q.z, theta)
	for j := 0; j < q.lay.K; j++ {
		if q.rng.IntN(2) == 1 {
			flipColumn(q.lay, theta, j)
		}
	}
}

// LogProb returns log q(θ).
func (q *symMix) LogProb(theta []float64) float64 {
	i := 0
	for s := 0; s < 1<<q.lay.K; s++ {
		copy(q.buf, theta)
		for j := 0; j < q.lay.K; j++ {
			if s>>j&1 == 1 {
				flipColumn(q.lay, q.buf, j)
			}
		}
		for g, c := range q.comps {
			q.lps[i] = q.logw[g] + c.logProb(q.buf, q.z)
			i++
		}
	}
	return floats.LogSumExp(q.lps) - float64(q.lay.K)*math.Ln2
}

// newMVT returns the t with location mu, scale matrix cov and nu degrees
// of freedom.
func newMVT(mu []float64, cov mat.Symmetric, nu float64) (*mvt, error) {
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return nil, errors.New("factorref: proposal scale matrix is not positive definite")
	}
	t := &mvt{mu: append([]float64(nil), mu...), nu: nu}
	ch.LTo(&t.l)
	n := float64(len(mu))
	lg1, _ := math.Lgamma((nu + n) / 2)
	lg2, _ := math.Lgamma(nu / 2)
	t.norm = lg1 - lg2 - n/2*math.Log(nu*math.Pi) - ch.LogDet()/2
	return t, nil
}

// weightedMoments returns the weighted mean and covariance of the rows of
// x (nil weights are equal).
func weightedMoments(x *mat.Dense, weights []float64) ([]float64, *mat.SymDense) {
	_, n := x.Dims()
	mu := make([]float64, n)
	for j := 0; j < n; j++ {
		mu[j] = stat.Mean(mat.Col(nil, j, x), weights)
	}
	cov := mat.NewSymDense(n, nil)
	stat.CovarianceMatrix(cov, x, weights)
	return mu, cov
}

func rowsDense(draws [][]float64) *mat.Dense {
	x := mat.NewDense(len(draws), len(draws[0]), nil)
	for i, d := range draws {
		x.SetRow(i, d)
	}
	return x
}

// fitMix fits a g-component Gaussian mixture to the draws (weighted, nil
// weights equal) by EM from k-means++-style starting means and the overall
// covariance, and returns it as t components of nu degrees of freedom with
// their weights.
func fitMix(draws [][]float64, weights []float64, g int, nu float64, rng *rand.Rand) ([]*mvt, []float64, error) {
	x := rowsDense(draws)
	nd, n := x.Dims()
	if weights == nil {
		weights = make([]float64, nd)
		floats.AddConst(1, weights)
	}
	mu0, cov0 := weightedMoments(x, weights)
	if g <= 1 {
		t, err := newMVT(mu0, cov0, nu)
		return []*mvt{t}, []float64{1}, err
	}
	// Starting means: draws picked with probability ∝ weight × squared
	// Mahalanobis distance to the nearest mean so far.
	g0, err := newGauss(mu0, cov0)
	if err != nil {
		return nil, nil, err
	}
	dist := make([]float64, nd)
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	means := [][]float64{}
	pick := func(p []float64) int {
		u := rng.Float64() * floats.Sum(p)
		for i, v := range p {
			if u -= v; u < 0 {
				return i
			}
		}
		return len(p) - 1
	}
	z := make([]float64, n)
	next := pick(weights)
	for c := 0; c < g; c++ {
		m := mat.Row(nil, next, x)
		means = append(means, m)
		p := make([]float64, nd)
		g0.mu = m
		for i := 0; i < nd; i++ {
			dist[i] = math.Min(dist[i], g0.mahal2(x.RawRowView(i), z))
			p[i] = weights[i] * dist[i]
		}
		next = pick(p)
	}
	covs := make([]*mat.SymDense, g)
	pis := make([]float64, g)
	for c := range covs {
		covs[c] = mat.NewSymDense(n, nil)
		covs[c].CopySym(cov0)
		pis[c] = 1 / float64(g)
	}
	resp := mat.NewDense(nd, g, nil)
	row := make([]float64, g)
	prevLL := math.Inf(-1)
	for iter := 0; iter < 100; iter++ {
		ll := 0.0
		// E step.
		comps := make([]*mvt, g)
		for c := range comps {
			var err error
			if comps[c], err = newGauss(means[c], covs[c]); err != nil {
				return nil, nil, err
			}
		}
		for i := 0; i < nd; i++ {
			xi := x.RawRowView(i)
			for c, t := range comps {
				row[c] = math.Log(pis[c]) + t.gaussLogProb(xi, z)
			}
			l := floats.LogSumExp(row)
			ll += weights[i] * l
			for c := range row {
				resp.Set(i, c, weights[i]*math.Exp(row[c]-l))
			}
		}
		// Stop when the mean log-likelihood gains less than 10⁻⁴.
		total := floats.Sum(weights)
		if ll/total-prevLL < 1e-4 {
			break
		}
		prevLL = ll / total
		// M step, each covariance regularised towards the overall one.
		for c := 0; c < g; c++ {
			rc := mat.Col(nil, c, resp)
			sc := floats.Sum(rc)
			pis[c] = sc / total
			if sc < float64(n+1) {
				return nil, nil, errors.New("factorref: a mixture component lost its draws; use fewer components")
			}
			means[c], covs[c] = weightedMoments(x, rc)
			for i := 0; i < n; i++ {
				covs[c].SetSym(i, i, covs[c].At(i, i)+1e-4*cov0.At(i, i))
			}
		}
	}
	var out []*mvt
	for c := 0; c < g; c++ {
		t, err := newMVT(means[c], covs[c], nu)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, t)
	}
	return out, pis, nil
}

// newGauss returns an mvt whose gaussLogProb is the normal density with
// mean mu and covariance cov.
func newGauss(mu []float64, cov mat.Symmetric) (*mvt, error) {
	t, err := newMVT(mu, cov, math.Inf(1))
	if err != nil {
		return nil, err
	}
	var ch mat.Cholesky
	ch.Factorize(cov)
	t.norm = -float64(len(mu))/2*math.Log(2*math.Pi) - ch.LogDet()/2
	return t, nil
}

// folder flips each column of B so that its pivot loading is positive,
// mapping θ to one of the 2^k symmetric copies of the posterior.
type folder struct {
	lay   factor.Layout
	pivot []int // position in θ of each column's pivot loading
}

// newFolder picks, for each column j, the row i ≥ j whose loading is
// farthest from zero in the draws, by E|β_ij| / sd|β_ij| (a sign-free
// figure, so draws from any sign copies give the same choice).
func newFolder(lay factor.Layout, draws [][]float64) (folder, []int) {
	f := folder{lay: lay}
	var rows []int
	a := make([]float64, len(draws))
	for j := 0; j < lay.K; j++ {
		best, bestRow := -1.0, j
		for i := j; i < lay.P; i++ {
			pos := loadingPos(lay, i, j)
			for d, th := range draws {
				a[d] = math.Abs(th[pos])
			}
			m, sd := stat.MeanStdDev(a, nil)
			if r := m / sd; r > best {
				best, bestRow = r, i
			}
		}
		f.pivot = append(f.pivot, loadingPos(lay, bestRow, j))
		rows = append(rows, bestRow)
	}
	return f, rows
}

// fold flips θ in place into the copy with positive pivots.
func (f folder) fold(theta []float64) {
	for j, pos := range f.pivot {
		if theta[pos] < 0 {
			flipColumn(f.lay, theta, j)
		}
	}
}

// mvt is the multivariate t with location mu, scale matrix L·Lᵀ and nu
// degrees of freedom (gonum's distmv.StudentsT would add a module
// dependency, golang.org/x/tools, for these few lines). Its methods take
// their scratch space, so one value serves every worker.
type mvt struct {
	mu   []float64
	l    mat.TriDense
	nu   float64
	norm float64
}

// rand draws x = mu + L·z·√(ν/χ²_ν), z standard normal.
func (t *mvt) rand(rng *rand.Rand, z, x []float64) {
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	copy(x, z)
	blas64.Trmv(blas.NoTrans, t.l.RawTriangular(), blas64.Vector{N: len(x), Data: x, Inc: 1})
	chi := distuv.ChiSquared{K: t.nu, Src: rng}
	floats.Scale(math.Sqrt(t.nu/chi.Rand()), x)
	floats.Add(x, t.mu)
}

// mahal2 returns the squared Mahalanobis distance of x from mu.
func (t *mvt) mahal2(x, z []float64) float64 {
	for i := range z {
		z[i] = x[i] - t.mu[i]
	}
	blas64.Trsv(blas.NoTrans, t.l.RawTriangular(), blas64.Vector{N: len(z), Data: z, Inc: 1})
	return floats.Dot(z, z)
}

// logProb returns log t(x).
func (t *mvt) logProb(x, z []float64) float64 {
	return t.norm - (t.nu+float64(len(z)))/2*math.Log1p(t.mahal2(x, z)/t.nu)
}

// gaussLogProb is the normal log-density of a component made by newGauss.
func (t *mvt) gaussLogProb(x, z []float64) float64 { return t.norm - t.mahal2(x, z)/2 }
