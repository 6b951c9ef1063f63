package robustvs

import (
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/ppl"
)

// Model constants of the paper's §5.1.
const (
	// PriorSD is the prior standard deviation of every coefficient.
	PriorSD = 10.0
	// NoiseSD1 and NoiseSD2 are the standard deviations of the two
	// equally weighted normal components of each error.
	NoiseSD1 = 1.0
	NoiseSD2 = 10.0
)

// indicators are the paper's four models k = (1, k₁, k₂, k₂).
var indicators = [][]int{{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 1, 1}, {1, 1, 1, 1}}

// Indicators returns the inclusion vectors of the four models, in model
// order: (1,0,0,0), (1,1,0,0), (1,0,1,1), (1,1,1,1).
func Indicators() [][]int {
	out := make([][]int, len(indicators))
	for k, v := range indicators {
		out[k] = append([]int(nil), v...)
	}
	return out
}

// Truth holds the exact posterior model probabilities of the four models,
// by tensor-grid quadrature of each model's evidence to about 1e-8 (see the
// data's README; the three-decimal values quoted elsewhere, 0.056, 0.098,
// 0.229 and 0.617, are an older importance-sampling estimate), in model
// order.
var truth = [...]float64{0.055530, 0.097557, 0.226959, 0.619953}

// Truth returns the reference model probabilities in model order.
func Truth() []float64 { return append([]float64(nil), truth[:]...) }

// ErrData is returned (wrapped) for data that cannot be used.
var ErrData = errors.New("robustvs: bad data")

// Data is the regression data: the response and the design matrix whose
// columns are the intercept and the covariates x₁, x₂, x₃.
type Data struct {
	Y []float64
	X *mat.Dense
}

// LoadData reads the paper's CSV file: a header naming the columns, the
// response in column "y" and the design in "X.1" … "X.4" (other columns,
// such as the row names and X.5, X.6, are ignored).
// An empty path reads the paper's data embedded in package datasets
// (DefaultData).
func LoadData(path string) (*Data, error) {
	d, _, err := datasets.Load(path, datasets.RobustRegression, ReadData)
	return d, err
}

// DefaultData returns the data of the paper's example, the 80 rows of the paper's §5.1,
// from the copy embedded in package datasets (datasets.RobustRegression).
func DefaultData() (*Data, error) { return LoadData("") }

// loadConfigData reads the data file at path, or the embedded default
// data when path is "", and returns them with the name of what it read.
func loadConfigData(path string) (*Data, string, error) {
	return datasets.Load(path, datasets.RobustRegression, ReadData)
}

// ReadData is LoadData from a reader. It reads the file as package
// datasets reads every data file (datasets.ReadCSV, datasets.ParseDatum).
func ReadData(r io.Reader) (*Data, error) {
	t, err := datasets.ReadCSV(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	if len(t.Rows) < 1 {
		return nil, fmt.Errorf("%w: need a header and at least one row", ErrData)
	}
	want := []string{"y", "X.1", "X.2", "X.3", "X.4"}
	col := make([]int, len(want))
	for i, name := range want {
		col[i] = -1
		for j, h := range t.Header {
			if h == name {
				col[i] = j
			}
		}
		if col[i] < 0 {
			return nil, fmt.Errorf("%w: no column %q (the header has %q)", ErrData, name, t.Header)
		}
	}
	n := len(t.Rows)
	d := &Data{Y: make([]float64, n), X: mat.NewDense(n, 4, nil)}
	for i, rec := range t.Rows {
		for c, j := range col {
			v, err := datasets.ParseDatum(rec[j])
			if err != nil {
				return nil, fmt.Errorf("%w: line %d column %q: %v", ErrData, t.Lines[i], want[c], err)
			}
			if c == 0 {
				d.Y[i] = v
			} else {
				d.X.Set(i, c-1, v)
			}
		}
	}
	return d, nil
}

// checkValues refuses data the likelihood cannot use: a value that is not
// finite or beyond datasets.MaxDatum, and a covariate column (X.2 on) that
// is constant. A constant covariate duplicates the intercept X.1, so the
// likelihood is flat along a line of coefficients that only the prior
// bounds: the posteriors of the models holding both are long ridges, which
// the pilots, flows and bridge cover at several times the cost (3.8× the
// CPU of a run on the paper's data, as reported) for no information.
func (d *Data) checkValues() error {
	for i, v := range d.Y {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > datasets.MaxDatum {
			return fmt.Errorf("%w: y of row %d is %v; the data must be finite and at most %g in magnitude", ErrData, i+1, v, datasets.MaxDatum)
		}
	}
	n, p := d.X.Dims()
	for j := range p {
		col := mat.Col(nil, j, d.X)
		for i, v := range col {
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > datasets.MaxDatum {
				return fmt.Errorf("%w: X.%d of row %d is %v; the data must be finite and at most %g in magnitude", ErrData, j+1, i+1, v, datasets.MaxDatum)
			}
		}
		if j > 0 && n > 1 && floats.Min(col) == floats.Max(col) {
			return fmt.Errorf("%w: covariate X.%d is constant (%v in every row): it duplicates the intercept X.1, so in the models holding both the data cannot tell their coefficients apart (a ridge only the prior bounds); drop or replace the column", ErrData, j+1, col[0])
		}
	}
	return nil
}

func (d *Data) check(ind []int) ([]int, error) {
	if d == nil || d.X == nil {
		return nil, fmt.Errorf("%w: nil data", ErrData)
	}
	n, p := d.X.Dims()
	if n != len(d.Y) || n < 1 {
		return nil, fmt.Errorf("%w: %d responses for a %d-row design", ErrData, len(d.Y), n)
	}
	if len(ind) != p {
		return nil, fmt.Errorf("%w: indicator of length %d for %d columns", ErrData, len(ind), p)
	}
	if err := d.checkValues(); err != nil {
		return nil, err
	}
	var cols []int
	for i, v := range ind {
		if v != 0 {
			cols = append(cols, i)
		}
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("%w: a model needs at least one coefficient", ErrData)
	}
	return cols, nil
}

func build(b *ppl.Builder, d *Data, cols []int) {
	beta := b.Real("beta", len(cols))
	b.Sample(ppl.Normal{Mu: 0.0, Sigma: PriorSD}, beta)
	n, _ := d.X.Dims()
	xk := mat.NewDense(n, len(cols), nil)
	for j, c := range cols {
		for i := 0; i < n; i++ {
			xk.Set(i, j, d.X.At(i, c))
		}
	}
	mu := b.Check(gorgonia.Mul(b.DataMatrix("X", xk), beta))
	b.Sample(ppl.Mixture{
		Weights: []float64{0.5, 0.5},
		Components: []ppl.Distribution{
			ppl.Normal{Mu: mu, Sigma: NoiseSD1},
			ppl.Normal{Mu: mu, Sigma: NoiseSD2},
		},
	}, b.Data("y", d.Y))
}

// NewModel returns the posterior of the model with inclusion vector ind
// (one entry per design column): β_i ~ N(0, 10²) for the included
// coefficients, each y_j − x_jᵀβ an equal mixture of N(0, 1) and
// N(0, 10²). Its parameters are the included coefficients in order; the
// density is normalised so that its integral is the evidence.
func NewModel(d *Data, ind []int) (*ppl.GraphModel, error) {
	cols, err := d.check(ind)
	if err != nil {
		return nil, err
	}
	b := ppl.NewBuilder()
	build(b, d, cols)
	return b.Model()
}

// SpaceOption is passed on to ppl.NewSpace by NewSpace (for instance
// ppl.WithAuxiliaryScale).
type SpaceOption = ppl.SpaceOption

// NewSpace returns the paper's model space: the four models with uniform
// prior probabilities (k₁, k₂ ~ Bernoulli(1/2)), labelled by their
// indicators "1,0,0,0" …, with β_i at saturated position i in every model.
func NewSpace(d *Data, opts ...SpaceOption) (*ppl.Space, error) {
	var ms []ppl.Model
	for _, ind := range indicators {
		m, err := NewModel(d, ind)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	o := append([]SpaceOption{ppl.WithIndicators(indicators), ppl.WithPositions(ppl.IndicatorPositions(indicators))}, opts...)
	return ppl.NewSpace(ms, o...)
}

// TemperedFactory returns a factory of SMC targets for the model with
// inclusion vector ind: the prior form of the model's
// (*ppl.GraphModel).Tempered (prior and likelihood apart, exact prior
// draws), which trj.Run also uses for the experiment's pilots.
func TemperedFactory(d *Data, ind []int) (func(worker int) (kernels.TemperedModel, error), error) {
	m, err := NewModel(d, ind)
	if err != nil {
		return nil, err
	}
	tm, err := m.Tempered()
	if err != nil {
		return nil, err
	}
	if !tm.FromPrior() {
		return nil, fmt.Errorf("robustvs: model %v has no prior form: %s", ind, tm.Reason())
	}
	return func(int) (kernels.TemperedModel, error) { return tm.Clone(), nil }, nil
}

// Alignment returns the permutation h̄ of TRJ from model a to model b
// (n_a ≤ n_b) in the form kernels.TRJConfig.Permutations wants: entry i is
// the index in (z_a, u) of the value that becomes coordinate i of model b.
// Coefficients present in both models keep their reference coordinate;
// the remaining coordinates of a fill b's remaining coefficients in order,
// and the auxiliaries u fill the rest.
func Alignment(a, b []int) []int {
	posA := ppl.IndicatorPositions([][]int{a})[0]
	posB := ppl.IndicatorPositions([][]int{b})[0]
	perm := make([]int, len(posB))
	used := make([]bool, len(posA))
	for i := range perm {
		perm[i] = -1
		for j, v := range posA {
			if v == posB[i] {
				perm[i], used[j] = j, true
			}
		}
	}
	nextA, nextU := 0, len(posA)
	for i := range perm {
		if perm[i] >= 0 {
			continue
		}
		for nextA < len(posA) && used[nextA] {
			nextA++
		}
		if nextA < len(posA) {
			perm[i], used[nextA] = nextA, true
			continue
		}
		perm[i] = nextU
		nextU++
	}
	return perm
}

// Permutations returns kernels.TRJConfig.Permutations for the models with
// the given indicators: Alignment for each ordered pair with
// (n_k, k) < (n_k', k'), nil otherwise.
func Permutations(ind [][]int) [][][]int {
	dim := func(v []int) int {
		n := 0
		for _, x := range v {
			if x != 0 {
				n++
			}
		}
		return n
	}
	out := make([][][]int, len(ind))
	for k := range ind {
		out[k] = make([][]int, len(ind))
		for kp := range ind {
			nk, nkp := dim(ind[k]), dim(ind[kp])
			if k != kp && (nk < nkp || nk == nkp && k < kp) {
				out[k][kp] = Alignment(ind[k], ind[kp])
			}
		}
	}
	return out
}
