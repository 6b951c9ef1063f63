package factor

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/ppl"
)

// Prior hyperparameters of the paper's §4.3 (Lopes and West 2004):
// Λ_ii ~ IG(IGShape, IGScale).
const (
	IGShape = 1.1
	IGScale = 0.05
)

// Factors lists the numbers of factors of the paper's model space, in
// model order.
var factors = [...]int{2, 3}

// Factors returns the numbers of factors k of the paper's two models, in
// model order: model 0 has 2 factors, model 1 has 3.
func Factors() []int { return append([]int(nil), factors[:]...) }

// ErrData is returned (wrapped) for a data file or matrix that cannot be
// used.
var ErrData = errors.New("factor: bad data")

// LoadData reads a CSV file with a header row and one numeric column per
// observed variable (the exchange-rate file of the paper has 143 rows and
// columns x1..x6).
// An empty path reads the paper's data embedded in package datasets
// (DefaultData).
func LoadData(path string) (*mat.Dense, error) {
	d, _, err := datasets.Load(path, datasets.ExchangeRates, ReadData)
	return d, err
}

// DefaultData returns the data of the paper's example, the 143 × 6 standardised exchange rates of the paper's §4.3,
// from the copy embedded in package datasets (datasets.ExchangeRates).
func DefaultData() (*mat.Dense, error) { return LoadData("") }

// loadConfigData reads the data file at path, or the embedded default
// data when path is "", and returns them with the name of what it read.
func loadConfigData(path string) (*mat.Dense, string, error) {
	return datasets.Load(path, datasets.ExchangeRates, ReadData)
}

// dataBytes returns the bytes of the data file at path, or of the
// embedded exchange-rate data when path is "".
func dataBytes(path string) ([]byte, error) {
	if path == "" {
		return datasets.ReadFile(datasets.ExchangeRates)
	}
	return os.ReadFile(path)
}

// ReadData is LoadData from a reader. It reads the file as package
// datasets reads every data file (datasets.ReadCSV, datasets.ParseDatum).
func ReadData(r io.Reader) (*mat.Dense, error) {
	t, err := datasets.ReadCSV(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	if len(t.Rows) < 1 {
		return nil, fmt.Errorf("%w: need a header and at least one row", ErrData)
	}
	p := len(t.Header)
	y := mat.NewDense(len(t.Rows), p, nil)
	for i, rec := range t.Rows {
		for j, s := range rec {
			v, err := datasets.ParseDatum(s)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d column %d (%s): %v", ErrData, t.Lines[i], j+1, t.Header[j], err)
			}
			y.Set(i, j, v)
		}
	}
	return y, nil
}

// Layout gives the positions of the k-factor model's parameters in its
// unconstrained vector u (the order ppl.Builder.CholeskyFactorCov and
// Positive fix): first the logs of B's diagonal, then B's entries below the
// diagonal row by row, then the logs of Λ's diagonal.
type Layout struct {
	// P is the number of observed variables and K the number of factors.
	P, K int
	// LogDiag[j] is the position of log β_jj.
	LogDiag []int
	// Lower[i][j], j < min(i, K), is the position of β_ij (i > j); other
	// entries are −1.
	Lower [][]int
	// LogLambda[i] is the position of log Λ_ii.
	LogLambda []int
}

// NewLayout returns the layout of the k-factor model on p variables.
func NewLayout(p, k int) Layout {
	l := Layout{P: p, K: k, Lower: make([][]int, p)}
	idx := 0
	for j := 0; j < k; j++ {
		l.LogDiag = append(l.LogDiag, idx)
		idx++
	}
	for i := 0; i < p; i++ {
		l.Lower[i] = make([]int, k)
		for j := range l.Lower[i] {
			l.Lower[i][j] = -1
		}
		for j := 0; j < min(i, k); j++ {
			l.Lower[i][j] = idx
			idx++
		}
	}
	for i := 0; i < p; i++ {
		l.LogLambda = append(l.LogLambda, idx)
		idx++
	}
	return l
}

// Dim is the model's dimension, p(k+1) − k(k−1)/2.
func (l Layout) Dim() int { return l.P*(l.K+1) - l.K*(l.K-1)/2 }

// Loadings writes the p×k loadings matrix B of the unconstrained point u
// into dst (nil allocates) and returns it.
func (l Layout) Loadings(u []float64, dst *mat.Dense) *mat.Dense {
	if dst == nil {
		dst = mat.NewDense(l.P, l.K, nil)
	} else {
		dst.Zero()
	}
	for j, pos := range l.LogDiag {
		dst.Set(j, j, math.Exp(u[pos]))
	}
	for i, row := range l.Lower {
		for j, pos := range row {
			if pos >= 0 {
				dst.Set(i, j, u[pos])
			}
		}
	}
	return dst
}

// BetaIndices lists the positions of the loadings (log-diagonal first, as
// in u) and LambdaIndices those of log Λ_ii.
func (l Layout) BetaIndices() []int {
	out := append([]int(nil), l.LogDiag...)
	for _, row := range l.Lower {
		for _, pos := range row {
			if pos >= 0 {
				out = append(out, pos)
			}
		}
	}
	return out
}

// LambdaIndices lists the positions of log Λ_ii in u.
func (l Layout) LambdaIndices() []int { return append([]int(nil), l.LogLambda...) }

// Mode returns +1 or −1, the sign of the summed loadings of variables 3..p
// (1-based) on factor 2: the 2-factor posterior has one mode with all of
// them positive and one with all of them negative, since variable 2's
// loading on factor 2, which alone fixes that sign, is close to zero. It
// returns 0 for a model with fewer than 2 factors or p < 3.
func (l Layout) Mode(u []float64) int {
	if l.K < 2 || l.P < 3 {
		return 0
	}
	s := 0.0
	for i := 2; i < l.P; i++ {
		s += u[l.Lower[i][1]]
	}
	if s >= 0 {
		return 1
	}
	return -1
}

// build adds the k-factor model to b: the priors, and the likelihood
// unless priorOnly.
func build(b *ppl.Builder, y *mat.Dense, k int, priorOnly bool) {
	_, p := y.Dims()
	B := b.CholeskyFactorCov("B", p, k)
	lambda := b.Positive("lambda", p)
	b.Sample(ppl.HalfNormal{Sigma: 1.0}, b.Check(ppl.Diag(B)))
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: 1.0}, b.Check(ppl.StrictlyLower(B)))
	b.Sample(ppl.InverseGamma{Shape: IGShape, Scale: IGScale}, lambda)
	if priorOnly {
		return
	}
	bbt := b.Check(gorgonia.Mul(B, b.Check(gorgonia.Transpose(B))))
	sigma := b.Check(gorgonia.Add(bbt, b.Check(ppl.DiagMatrix(lambda))))
	b.Sample(ppl.MvNormal{Mu: 0.0, Sigma: sigma}, b.DataMatrix("y", y))
}

func checkData(y *mat.Dense, k int) error {
	if y == nil {
		return fmt.Errorf("%w: nil data", ErrData)
	}
	n, p := y.Dims()
	switch {
	case p < 2:
		return fmt.Errorf("%w: the data have %d column(s); a factor model needs at least 2 observed variables (columns)", ErrData, p)
	case k < 1 || k > p:
		return fmt.Errorf("%w: %d factors for %d observed variables (columns); want between 1 and %d", ErrData, k, p, p)
	case n <= p:
		return fmt.Errorf("%w: the data have %d rows (observations) for %d columns (variables); the factor model needs more rows than columns, at least %d", ErrData, n, p, p+1)
	}
	return nil
}

// NewModel returns the posterior of the k-factor model on the rows of y
// (the observations): y_i ~ N(0, BBᵀ + Λ), B p×k lower-triangular with
// positive diagonal, β_ij ~ N(0, 1) (i > j), β_jj ~ N⁺(0, 1),
// Λ_ii ~ IG(1.1, 0.05). Its density is normalised (prior × likelihood,
// every constant kept), so that its integral is the evidence.
func NewModel(y *mat.Dense, k int) (*ppl.GraphModel, error) { return newModel(y, k, false) }

// NewPriorModel returns the prior of the k-factor model on the same
// unconstrained space as NewModel (log-Jacobians included).
func NewPriorModel(y *mat.Dense, k int) (*ppl.GraphModel, error) { return newModel(y, k, true) }

func newModel(y *mat.Dense, k int, prior bool) (*ppl.GraphModel, error) {
	if err := checkData(y, k); err != nil {
		return nil, err
	}
	b := ppl.NewBuilder()
	build(b, y, k, prior)
	return b.Model()
}

// NewSpace returns the paper's model space: the 2- and 3-factor models
// with equal prior probabilities, labelled "2" and "3".
func NewSpace(y *mat.Dense) (*ppl.Space, error) {
	var ms []ppl.Model
	var labels []string
	for _, k := range factors {
		m, err := NewModel(y, k)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
		labels = append(labels, strconv.Itoa(k))
	}
	return ppl.NewSpace(ms, ppl.WithLabels(labels...))
}

// SamplePrior draws u from the k-factor prior on the unconstrained scale
// of layout l: log β_jj = log|N(0, 1)|, β_ij ~ N(0, 1), log Λ_ii with
// Λ_ii = IGScale / Gamma(IGShape, 1).
func SamplePrior(rng *rand.Rand, l Layout, u []float64) error {
	if len(u) != l.Dim() {
		return fmt.Errorf("factor: prior draw of length %d, want %d", len(u), l.Dim())
	}
	g := distuv.Gamma{Alpha: IGShape, Beta: 1, Src: rng}
	for _, pos := range l.LogDiag {
		u[pos] = math.Log(math.Abs(rng.NormFloat64()))
	}
	for _, row := range l.Lower {
		for _, pos := range row {
			if pos >= 0 {
				u[pos] = rng.NormFloat64()
			}
		}
	}
	for _, pos := range l.LogLambda {
		// Λ = β/G; very small G would overflow to +Inf.
		gv := max(g.Rand(), 1e-300)
		u[pos] = math.Log(IGScale) - math.Log(gv)
	}
	return nil
}

// TemperedFactory returns a factory of SMC targets (prior and likelihood
// kept apart, prior draws exact) for the k-factor model, one per worker.
// The model's priors are on expressions of its Cholesky-factor parameter
// (the diagonal and the strictly lower part of B), which the prior form of
// (*ppl.GraphModel).Tempered does not cover, so the likelihood here is the
// posterior less NewPriorModel and the prior draws come from SamplePrior.
func TemperedFactory(y *mat.Dense, k int) (func(worker int) (kernels.TemperedModel, error), error) {
	post, err := NewModel(y, k)
	if err != nil {
		return nil, err
	}
	prior, err := NewPriorModel(y, k)
	if err != nil {
		return nil, err
	}
	_, p := y.Dims()
	lay := NewLayout(p, k)
	return func(int) (kernels.TemperedModel, error) {
		pr := prior.Clone()
		lik, err := experiment.NewLikelihood(post.Clone(), prior.Clone())
		if err != nil {
			return nil, err
		}
		return kernels.NewSplitModel(pr, lik, func(rng *rand.Rand, u []float64) error { return SamplePrior(rng, lay, u) })
	}, nil
}

// Alignment returns the permutation h̄ that TRJ uses between a smaller
// model small and a larger model large on the same variables
// (kernels.TRJConfig.Permutations): entry i is the index in (z_small, u)
// of the coordinate that becomes coordinate i of model large, so that
// each parameter shared by the two models (β_ij, Λ_ii) keeps its
// reference coordinate and the auxiliaries u fill the new loadings.
func Alignment(small, large Layout) []int {
	perm := make([]int, large.Dim())
	next := small.Dim()
	put := func(posLarge, posSmall int) {
		if posSmall >= 0 {
			perm[posLarge] = posSmall
			return
		}
		perm[posLarge] = next
		next++
	}
	for j, pos := range large.LogDiag {
		ps := -1
		if j < small.K {
			ps = small.LogDiag[j]
		}
		put(pos, ps)
	}
	for i, row := range large.Lower {
		for j, pos := range row {
			if pos < 0 {
				continue
			}
			ps := -1
			if j < small.K {
				ps = small.Lower[i][j]
			}
			put(pos, ps)
		}
	}
	for i, pos := range large.LogLambda {
		put(pos, small.LogLambda[i])
	}
	return perm
}
