package main

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/factor"
	"github.com/trjgo/trj/ppl"
)

// foldedPivots are the pivot rows (0-based, one per factor) of the folded
// models: those newFolder picked from the reference's NUTS draws (seeds 1
// and 2).
var foldedPivots = map[int][]int{2: {0, 3}, 3: {0, 4, 5}}

// folded is the k-factor model on the sign-free scale θ folded onto the
// sign copy with positive pivot loadings: density 2^k·p(θ) there and 0
// elsewhere (a wall, not a log scale, so that no funnel opens at a pivot
// near zero), hence the same evidence as factor.NewModel. It is the
// experiment of bench/README.md's FA section, as a user could write it
// for trj.Run today; trj has no way to declare the symmetry itself.
type folded struct {
	*signFree
	pivots []int // positions in θ
}

var errWall = errors.New("factorref: a pivot loading is negative (outside the folded space)")

func newFolded(y *mat.Dense, k int) (*folded, error) {
	m, err := factor.NewModel(y, k)
	if err != nil {
		return nil, err
	}
	_, p := y.Dims()
	lay := factor.NewLayout(p, k)
	f := &folded{signFree: newSignFree(m, lay)}
	for j, r := range foldedPivots[k] {
		f.pivots = append(f.pivots, loadingPos(lay, r, j))
	}
	return f, nil
}

func (f *folded) inside(x []float64) bool {
	for _, pos := range f.pivots {
		if !(x[pos] > 0) {
			return false
		}
	}
	return true
}

// LogDensity returns log(2^k·p(θ)) inside the folded space.
func (f *folded) LogDensity(x []float64) (float64, error) {
	if !f.inside(x) {
		return math.Inf(-1), errWall
	}
	lp, err := f.signFree.LogDensity(x)
	return lp + float64(f.lay.K)*math.Ln2, err
}

// LogDensityGrad is LogDensity with its gradient.
func (f *folded) LogDensityGrad(x, grad []float64) (float64, error) {
	if !f.inside(x) {
		return math.Inf(-1), errWall
	}
	lp, err := f.signFree.LogDensityGrad(x, grad)
	return lp + float64(f.lay.K)*math.Ln2, err
}

// Init draws the model's initial point, folded.
func (f *folded) Init(rng *rand.Rand, x []float64) error {
	if err := f.signFree.Init(rng, x); err != nil {
		return err
	}
	for j, pos := range f.pivots {
		if x[pos] < 0 {
			flipColumn(f.lay, x, j)
		}
		if x[pos] == 0 {
			x[pos] = 1e-3
		}
	}
	return nil
}

// Clone returns an independent copy.
func (f *folded) Clone() ppl.Model {
	return &folded{signFree: f.signFree.clone(), pivots: f.pivots}
}

// newFoldedSpace is factor.NewSpace with the folded models.
func newFoldedSpace(y *mat.Dense) (*ppl.Space, error) {
	var ms []ppl.Model
	var labels []string
	for _, k := range factor.Factors() {
		m, err := newFolded(y, k)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
		labels = append(labels, strconv.Itoa(k))
	}
	return ppl.NewSpace(ms, ppl.WithLabels(labels...))
}
