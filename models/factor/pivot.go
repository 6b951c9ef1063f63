package factor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/ppl"
)

// DefaultPivots are the pivot rows (0-based, one per factor) of
// NewPivotSpace on the paper's data, for 2 and 3 factors: the loading of
// each factor that is farthest from zero in the posterior (by E|β|/sd|β|
// in the sign-free draws of bench/factorref), variable 1 for factor 1,
// variable 4 for factor 2 and variable 6 for factor 3.
var DefaultPivots = map[int][]int{2: {0, 3}, 3: {0, 3, 5}}

// PivotModel is the k-factor model identified by the sign of one chosen
// loading per factor (its pivot) instead of the sign of B's diagonal: B is
// p×k lower triangular with its diagonal of either sign, the pivot
// loadings β_{r_j j} ~ N⁺(0, 1) and every other loading N(0, 1), Λ as in
// NewModel. The likelihood is invariant under the sign flip of any
// column of B, so both constraints pick one of the 2^k sign copies of the
// same sign-free posterior and the evidence is NewModel's. Where a
// diagonal loading is near zero (β_22 on the paper's data), NewModel's
// posterior has two sign modes that are disconnected on its log scale,
// which NUTS pilots do not cross and per-model transports fit poorly;
// with a pivot far from zero the mode is one.
//
// Its unconstrained vector uses the positions of NewLayout(p, k): the
// pivot loadings on the log scale, the diagonal loadings that are not
// pivots on the real line, log Λ_ii. Its density is computed by
// NewModel's compiled graph at the point whose columns are flipped to a
// positive diagonal, with the change of variables' log-Jacobian; its
// ParamNames and Constrain are NewModel's, with the loadings' signs.
type PivotModel struct {
	m      ppl.Model
	lay    Layout
	pivots []int // row of each column's pivot
	bIdx   [][2]int
	u, g   []float64
	flip   []bool
}

// NewPivotModel returns the k-factor model on the rows of y (k =
// len(pivots)) with pivots[j], a row j ≤ pivots[j] < p, the loading of
// factor j whose sign is fixed positive.
func NewPivotModel(y *mat.Dense, pivots []int) (*PivotModel, error) {
	k := len(pivots)
	m, err := NewModel(y, k)
	if err != nil {
		return nil, err
	}
	_, p := y.Dims()
	for j, r := range pivots {
		if r < j || r >= p {
			return nil, fmt.Errorf("%w: pivot row %d of factor %d; want a row in [%d, %d) (B is lower triangular)", ErrData, r, j, j, p)
		}
	}
	pm := &PivotModel{m: m, lay: NewLayout(p, k), pivots: append([]int(nil), pivots...)}
	// Where each loading is in the constrained values (names B.i.j, 1-based).
	for c, name := range m.ParamNames() {
		f := strings.Split(name, ".")
		if len(f) != 3 || f[0] != "B" {
			continue
		}
		_, err1 := strconv.Atoi(f[1])
		j, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("factor: unexpected parameter name %q", name)
		}
		pm.bIdx = append(pm.bIdx, [2]int{c, j - 1})
	}
	pm.alloc()
	return pm, nil
}

func (pm *PivotModel) alloc() {
	n := pm.lay.Dim()
	pm.u, pm.g, pm.flip = make([]float64, n), make([]float64, n), make([]bool, pm.lay.K)
}

// pos is the position of β_ij (i ≥ j) in the unconstrained vector.
func (pm *PivotModel) pos(i, j int) int {
	if i == j {
		return pm.lay.LogDiag[j]
	}
	return pm.lay.Lower[i][j]
}

var errZeroDiag = errors.New("factor: a diagonal loading is exactly zero")

// toModel writes NewModel's point of x into pm.u and returns the
// log-Jacobian log Π β_{r_j j} − log Π |β_jj| of the map.
func (pm *PivotModel) toModel(x []float64) (float64, error) {
	copy(pm.u, x)
	logJ := 0.0
	for j, r := range pm.pivots {
		d := pm.lay.LogDiag[j]
		if r == j {
			pm.flip[j] = false // x holds log β_jj, as NewModel's u
			continue
		}
		b := x[d]
		if b == 0 {
			return 0, errZeroDiag
		}
		pm.flip[j] = b < 0
		pm.u[d] = math.Log(math.Abs(b))
		pv := pm.pos(r, j)
		logJ += x[pv] - pm.u[d]
		pm.u[pv] = math.Exp(x[pv])
		if pm.flip[j] {
			for i := j + 1; i < pm.lay.P; i++ {
				pos := pm.lay.Lower[i][j]
				pm.u[pos] = -pm.u[pos]
			}
		}
	}
	return logJ, nil
}

// Dim is the dimension, NewLayout(p, k).Dim().
func (pm *PivotModel) Dim() int { return pm.lay.Dim() }

// LogDensity returns the log posterior density (normalised: its integral
// is the evidence) at the unconstrained point x.
func (pm *PivotModel) LogDensity(x []float64) (float64, error) {
	logJ, err := pm.toModel(x)
	if err != nil {
		return math.Inf(-1), err
	}
	lp, err := pm.m.LogDensity(pm.u)
	return lp + logJ, err
}

// LogDensityGrad is LogDensity with its gradient, from NewModel's by the
// chain rule.
func (pm *PivotModel) LogDensityGrad(x, grad []float64) (float64, error) {
	logJ, err := pm.toModel(x)
	if err != nil {
		return math.Inf(-1), err
	}
	lp, err := pm.m.LogDensityGrad(pm.u, pm.g)
	if err != nil {
		return math.Inf(-1), err
	}
	copy(grad, pm.g)
	for j, r := range pm.pivots {
		if r == j {
			continue
		}
		s := 1.0
		if pm.flip[j] {
			s = -1
		}
		d := pm.lay.LogDiag[j]
		grad[d] = (pm.g[d] - 1) / x[d]
		for i := j + 1; i < pm.lay.P; i++ {
			pos := pm.lay.Lower[i][j]
			grad[pos] = s * pm.g[pos]
		}
		pv := pm.pos(r, j)
		grad[pv] = s*pm.g[pv]*math.Exp(x[pv]) + 1
	}
	return lp + logJ, nil
}

// ParamNames returns NewModel's names.
func (pm *PivotModel) ParamNames() []string { return pm.m.ParamNames() }

// Constrain writes B (with its signs) and Λ at x into dst.
func (pm *PivotModel) Constrain(x, dst []float64) error {
	if _, err := pm.toModel(x); err != nil {
		return err
	}
	if err := pm.m.Constrain(pm.u, dst); err != nil {
		return err
	}
	for _, bj := range pm.bIdx {
		if pm.flip[bj[1]] {
			dst[bj[0]] = -dst[bj[0]]
		}
	}
	return nil
}

// Init writes NewModel's initial point, its columns flipped to positive
// pivots, into x.
func (pm *PivotModel) Init(rng *rand.Rand, x []float64) error {
	if err := pm.m.Init(rng, x); err != nil {
		return err
	}
	for j, r := range pm.pivots {
		if r == j {
			continue
		}
		d, pv := pm.lay.LogDiag[j], pm.pos(r, j)
		x[d] = math.Exp(x[d])
		if x[pv] < 0 {
			x[d] = -x[d]
			for i := j + 1; i < pm.lay.P; i++ {
				x[pm.lay.Lower[i][j]] = -x[pm.lay.Lower[i][j]]
			}
		}
		x[pv] = math.Log(math.Max(x[pv], 1e-3))
	}
	return nil
}

// Clone returns an independent copy for another goroutine.
func (pm *PivotModel) Clone() ppl.Model {
	c := &PivotModel{m: pm.m.Clone(), lay: pm.lay, pivots: pm.pivots, bIdx: pm.bIdx}
	c.alloc()
	return c
}

// NewPivotSpace is NewSpace with the models identified by DefaultPivots
// (NewPivotModel) instead of a positive diagonal: the same evidences and
// model probabilities, one sign mode per model on the paper's data.
func NewPivotSpace(y *mat.Dense) (*ppl.Space, error) {
	var ms []ppl.Model
	var labels []string
	for _, k := range factors {
		m, err := NewPivotModel(y, DefaultPivots[k])
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
		labels = append(labels, strconv.Itoa(k))
	}
	return ppl.NewSpace(ms, ppl.WithLabels(labels...))
}
