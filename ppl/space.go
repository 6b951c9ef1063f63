package ppl

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/floats"
)

// Space is a finite set of models K = {0, …, K−1} for transdimensional
// inference: model k has a Model of dimension n_k and prior probability
// p(k), and the joint target is log π(k, θ_k) = log p(k) + log π_k(θ_k).
// Models may be labelled by indicator vectors such as (1,0,1,1), with label
// strings "1,0,1,1".
//
// Space also defines the saturated target of the paper's §5 (CTRJ) on
// R^{n_max}: ξ = c_k(θ_k, u) holds θ_k at model k's positions (in order)
// and auxiliaries u elsewhere, and
//
//	log π̃(k, ξ) = log π(k, θ_k) + Σ_{i inactive} log ν(ξ_i),  ν = N(0, s²),
//
// with s = 1 (the reference) unless WithAuxiliaryScale says otherwise.
//
// Parameters shared by all models, such as the noise scale of every
// regression in a variable selection, are declared with WithShared(n): they
// are the last n coordinates of every model's θ_k and the last n saturated
// coordinates, active in every model, so that a jump carries them over.
//
// Space methods satisfy kernels.TransdimensionalTarget. A Space keeps
// scratch space and its models are not safe for concurrent use: Clone it
// for each goroutine.
type Space struct {
	models    []Model
	labels    []string
	vectors   [][]int
	logPrior  []float64
	index     map[string]int
	positions [][]int
	active    [][]bool
	maxDim    int
	shared    int // number of shared parameters (WithShared)
	auxSD     float64
	theta     []float64 // gather scratch
	grad      []float64
}

// SpaceOption configures NewSpace.
type SpaceOption func(*Space) error

// WithLabels names the models.
func WithLabels(labels ...string) SpaceOption {
	return func(s *Space) error {
		if len(labels) != len(s.models) {
			return fmt.Errorf("ppl: %d labels for %d models", len(labels), len(s.models))
		}
		s.labels = append([]string(nil), labels...)
		return nil
	}
}

// WithIndicators labels each model by its inclusion indicators (as in
// variable selection): vectors[k][i] is 1 when candidate coordinate i is in
// model k and 0 otherwise, and model k's label is the vector joined by
// commas, e.g. "1,0,1,1". The vectors must have one length, and each model's
// dimension must be its number of ones plus the number of shared parameters
// (WithShared); NewSpace reports any mismatch. WithPositions(
// IndicatorPositions(vectors)) then keeps candidate i at saturated position
// i in every model. Models labelled otherwise take WithLabels.
func WithIndicators(vectors [][]int) SpaceOption {
	return func(s *Space) error {
		if len(vectors) != len(s.models) {
			return fmt.Errorf("ppl: %d indicator vectors for %d models", len(vectors), len(s.models))
		}
		for k, v := range vectors {
			if len(v) != len(vectors[0]) {
				return fmt.Errorf("ppl: indicator vector %d (%v) has length %d, vector 0 (%v) %d", k, v, len(v), vectors[0], len(vectors[0]))
			}
			for i, x := range v {
				if x != 0 && x != 1 {
					return fmt.Errorf("ppl: indicator vector %d (%v): entry %d is %d, want 0 or 1", k, v, i, x)
				}
			}
		}
		s.vectors = make([][]int, len(vectors))
		s.labels = make([]string, len(vectors))
		for k, v := range vectors {
			s.vectors[k] = append([]int(nil), v...)
			s.labels[k] = joinInts(v)
		}
		return nil
	}
}

// WithLogPrior sets the log prior model probabilities, normalised by
// NewSpace (so log weights up to a constant are fine). The default is
// uniform.
func WithLogPrior(logPrior []float64) SpaceOption {
	return func(s *Space) error {
		if len(logPrior) != len(s.models) {
			return fmt.Errorf("ppl: %d log prior values for %d models", len(logPrior), len(s.models))
		}
		for k, v := range logPrior {
			if math.IsNaN(v) || math.IsInf(v, 1) {
				return fmt.Errorf("ppl: log prior of model %d is %v", k, v)
			}
		}
		lse := floats.LogSumExp(logPrior)
		if math.IsInf(lse, -1) {
			return errors.New("ppl: every model has prior probability zero")
		}
		s.logPrior = make([]float64, len(logPrior))
		for k, v := range logPrior {
			s.logPrior[k] = v - lse
		}
		return nil
	}
}

// WithPositions fixes the saturated layout: positions[k][j] is the
// saturated coordinate holding coordinate j of model k's unconstrained
// vector, strictly increasing in j (so that the layout is the concatenation
// c_k CTRJ expects). For variable selection this keeps β_i at position i in
// every model. The default puts θ_k first: positions 0, …, n_k − 1. With
// WithShared(n), positions[k] lists only model k's own n_k − n coordinates
// (the shared ones always take the last n saturated positions).
func WithPositions(positions [][]int) SpaceOption {
	return func(s *Space) error {
		if len(positions) != len(s.models) {
			return fmt.Errorf("ppl: %d position maps for %d models", len(positions), len(s.models))
		}
		s.positions = make([][]int, len(positions))
		for k, p := range positions {
			s.positions[k] = append([]int(nil), p...)
		}
		return nil
	}
}

// IndicatorPositions returns the position map of indicator-labelled models
// whose parameters are exactly the included coordinates: model k's
// coordinates sit at the indices i where vectors[k][i] ≠ 0. For variable
// selection, WithPositions(IndicatorPositions(ind)) keeps β_i at position i.
func IndicatorPositions(vectors [][]int) [][]int {
	out := make([][]int, len(vectors))
	for k, v := range vectors {
		out[k] = []int{}
		for i, x := range v {
			if x != 0 {
				out[k] = append(out[k], i)
			}
		}
	}
	return out
}

// WithSaturatedDim sets n_max when it should exceed what the models and
// positions imply.
func WithSaturatedDim(n int) SpaceOption {
	return func(s *Space) error {
		if n < 1 {
			return fmt.Errorf("ppl: saturated dimension %d", n)
		}
		s.maxDim = n
		return nil
	}
}

// WithShared declares that the last n coordinates of every model's
// unconstrained vector are n parameters shared by all models (a noise scale
// in every regression, say). In the saturated layout they occupy the last n
// positions, n_max − n, …, n_max − 1, active in every model, so CTRJ keeps
// them across jumps; the models' own coordinates come before them (at the
// positions given by WithPositions, or first). Indicator vectors
// (WithIndicators) and position maps then describe only the models' own
// coordinates. Every model must have dimension at least n, and the shared
// parameters must be the same in every model: where the models name their
// coordinates (models built by Builder, and the models of a masked
// selection space), NewSpace refuses models whose last n coordinates have
// different names, which would carry one model's parameter into
// another's. Models of other types are not checked: their ParamNames name
// constrained values, which need not be their coordinates.
func WithShared(n int) SpaceOption {
	return func(s *Space) error {
		if n < 0 {
			return fmt.Errorf("ppl: %d shared parameters", n)
		}
		s.shared = n
		return nil
	}
}

// WithAuxiliaryScale makes ν = N(0, sd²) instead of the standard normal
// (e.g. the prior of dropped coefficients, for the independent-auxiliary
// proposal of Brooks et al. 2003).
func WithAuxiliaryScale(sd float64) SpaceOption {
	return func(s *Space) error {
		if !(sd > 0) || math.IsInf(sd, 1) {
			return fmt.Errorf("ppl: auxiliary scale %v", sd)
		}
		s.auxSD = sd
		return nil
	}
}

// NewSpace returns the model space over models (at least one).
func NewSpace(models []Model, opts ...SpaceOption) (*Space, error) {
	if len(models) == 0 {
		return nil, errors.New("ppl: a model space needs at least one model")
	}
	s := &Space{models: append([]Model(nil), models...), auxSD: 1}
	for k, m := range s.models {
		if m == nil {
			return nil, fmt.Errorf("ppl: model %d is nil", k)
		}
		if m.Dim() < 1 {
			return nil, fmt.Errorf("ppl: model %d has dimension %d", k, m.Dim())
		}
	}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("ppl: space option %d is nil", i)
		}
		if err := o(s); err != nil {
			return nil, err
		}
	}
	K := len(s.models)
	if s.labels == nil {
		s.labels = make([]string, K)
		for k := range s.labels {
			s.labels[k] = strconv.Itoa(k)
		}
	}
	s.index = make(map[string]int, K)
	for k, l := range s.labels {
		key := normLabel(l)
		if _, dup := s.index[key]; dup {
			return nil, fmt.Errorf("ppl: duplicate model label %q", l)
		}
		s.index[key] = k
	}
	if s.logPrior == nil {
		s.logPrior = make([]float64, K)
		for k := range s.logPrior {
			s.logPrior[k] = -math.Log(float64(K))
		}
	}
	if err := s.layout(); err != nil {
		return nil, err
	}
	s.active = make([][]bool, K)
	for k, p := range s.positions {
		s.active[k] = make([]bool, s.maxDim)
		for _, i := range p {
			s.active[k][i] = true
		}
	}
	s.theta = make([]float64, s.maxDim)
	s.grad = make([]float64, s.maxDim)
	return s, nil
}

// layout checks the indicators, positions and shared parameters against
// the models' dimensions and sets the saturated dimension.
func (s *Space) layout() error {
	n := s.shared
	for k, m := range s.models {
		if m.Dim() < n {
			return fmt.Errorf("ppl: model %d (%s) has dimension %d, below the %d shared parameters", k, s.labels[k], m.Dim(), n)
		}
	}
	if err := s.checkSharedNames(); err != nil {
		return err
	}
	if s.vectors != nil {
		for k, v := range s.vectors {
			ones := 0
			for _, x := range v {
				ones += x
			}
			if ones+n != s.models[k].Dim() {
				return fmt.Errorf("ppl: model %d (%s) has dimension %d but its indicator vector has %d ones and the space %d shared parameters (WithShared)", k, s.labels[k], s.models[k].Dim(), ones, n)
			}
		}
	}
	if s.positions == nil {
		s.positions = make([][]int, len(s.models))
		for k, m := range s.models {
			s.positions[k] = make([]int, m.Dim()-n)
			for j := range s.positions[k] {
				s.positions[k][j] = j
			}
		}
	}
	need := 0 // saturated coordinates the models' own parameters need
	for k, p := range s.positions {
		if len(p) != s.models[k].Dim()-n {
			if n > 0 {
				return fmt.Errorf("ppl: model %d (%s): %d positions for its %d own coordinates (dimension %d, %d shared)", k, s.labels[k], len(p), s.models[k].Dim()-n, s.models[k].Dim(), n)
			}
			return fmt.Errorf("ppl: model %d (%s): %d positions for dimension %d", k, s.labels[k], len(p), s.models[k].Dim())
		}
		for j, i := range p {
			if i < 0 || j > 0 && i <= p[j-1] {
				return fmt.Errorf("ppl: model %d (%s): positions %v are not strictly increasing non-negative", k, s.labels[k], p)
			}
		}
		if len(p) > 0 {
			need = max(need, p[len(p)-1]+1)
		}
	}
	if s.maxDim == 0 {
		s.maxDim = need + n
	} else if s.maxDim < need+n {
		return fmt.Errorf("ppl: saturated dimension %d is below the %d the positions and %d shared parameters need", s.maxDim, need+n, n)
	}
	if n > 0 {
		for k, p := range s.positions {
			full := append(append(make([]int, 0, len(p)+n), p...), make([]int, n)...)
			for j := range n {
				full[len(p)+j] = s.maxDim - n + j
			}
			s.positions[k] = full
		}
	}
	return nil
}

// checkSharedNames refuses shared coordinates (WithShared) named
// differently in two models.
func (s *Space) checkSharedNames() error {
	n := s.shared
	if n == 0 {
		return nil
	}
	first := -1
	var want []string
	for k, m := range s.models {
		names := unconstrainedNames(m)
		if names == nil {
			continue
		}
		tail := names[len(names)-n:]
		if first < 0 {
			first, want = k, tail
			continue
		}
		if !slices.Equal(tail, want) {
			return fmt.Errorf("ppl: WithShared(%d): the shared coordinates are %v in model %d (%s) but %v in model %d (%s): declare the shared parameters last in every model, in the same order and with the same names",
				n, tail, k, s.labels[k], want, first, s.labels[first])
		}
	}
	return nil
}

// unconstrainedNames names model m's unconstrained coordinates when it can
// (a GraphModel: built by a Builder, or a view of a masked selection
// space's saturated model, named as the saturated model names the view's
// coordinates; nil otherwise): a parameter whose transform keeps its size
// gives its flat names (beta.1, sigma), another its name and the
// coordinate's index (p#1, p#2).
func unconstrainedNames(m Model) []string {
	g, ok := m.(*GraphModel)
	if !ok {
		return nil
	}
	if v := g.shared.view; v != nil {
		sat := unconstrainedNames(v.sat.proto)
		names := make([]string, len(v.idx))
		for j, i := range v.idx {
			if i >= len(sat) {
				return nil
			}
			names[j] = sat[i]
		}
		return names
	}
	var names []string
	for _, p := range g.shared.params {
		if p.usize == p.size() {
			names = flatNames(names, p.name, p.shape)
			continue
		}
		for j := range p.usize {
			names = append(names, p.name+"#"+strconv.Itoa(j+1))
		}
	}
	if len(names) != m.Dim() {
		return nil
	}
	return names
}

// NumShared is the number of parameters shared by all models (WithShared):
// the last NumShared coordinates of every θ_k and of ξ.
func (s *Space) NumShared() int { return s.shared }

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

// normLabel lets "(1, 0, 1, 1)" find the model labelled "1,0,1,1".
func normLabel(l string) string {
	return strings.NewReplacer(" ", "", "(", "", ")", "", "\t", "").Replace(l)
}

// Clone returns a copy whose models are clones, for another goroutine.
func (s *Space) Clone() *Space {
	c := *s
	c.models = make([]Model, len(s.models))
	for k, m := range s.models {
		c.models[k] = m.Clone()
	}
	c.theta = make([]float64, s.maxDim)
	c.grad = make([]float64, s.maxDim)
	return &c
}

func (s *Space) check(k int) error {
	if k < 0 || k >= len(s.models) {
		return fmt.Errorf("ppl: model index %d out of range [0, %d)", k, len(s.models))
	}
	return nil
}

// NumModels is the number of models K.
func (s *Space) NumModels() int { return len(s.models) }

// Model returns model k.
func (s *Space) Model(k int) (Model, error) {
	if err := s.check(k); err != nil {
		return nil, err
	}
	return s.models[k], nil
}

// ModelDim is n_k, the unconstrained dimension of model k, or 0 for an
// out-of-range k.
func (s *Space) ModelDim(k int) int {
	if s.check(k) != nil {
		return 0
	}
	return s.models[k].Dim()
}

// ModelLabel is model k's label, or "" for an out-of-range k.
func (s *Space) ModelLabel(k int) string {
	if s.check(k) != nil {
		return ""
	}
	return s.labels[k]
}

// Indicator returns model k's indicator vector (nil without
// WithIndicators). The caller must not modify it.
func (s *Space) Indicator(k int) ([]int, error) {
	if err := s.check(k); err != nil {
		return nil, err
	}
	if s.vectors == nil {
		return nil, nil
	}
	return s.vectors[k], nil
}

// Index returns the index of the model with the given label; indicator
// labels may be written with spaces or parentheses, "(1, 0, 1, 1)".
func (s *Space) Index(label string) (int, error) {
	k, ok := s.index[normLabel(label)]
	if !ok {
		return -1, fmt.Errorf("ppl: no model labelled %q", label)
	}
	return k, nil
}

// LogPrior returns log p(k).
func (s *Space) LogPrior(k int) (float64, error) {
	if err := s.check(k); err != nil {
		return math.Inf(-1), err
	}
	return s.logPrior[k], nil
}

// LogDensity returns log π(k, θ) = log p(k) + log π_k(θ), θ unconstrained
// of length n_k.
func (s *Space) LogDensity(k int, theta []float64) (float64, error) {
	if err := s.check(k); err != nil {
		return math.Inf(-1), err
	}
	lp, err := s.models[k].LogDensity(theta)
	return s.logPrior[k] + lp, err
}

// LogDensityGrad is LogDensity that also writes ∇_θ into grad.
func (s *Space) LogDensityGrad(k int, theta, grad []float64) (float64, error) {
	if err := s.check(k); err != nil {
		return math.Inf(-1), err
	}
	lp, err := s.models[k].LogDensityGrad(theta, grad)
	return s.logPrior[k] + lp, err
}

// MaxDim is the saturated dimension n_max.
func (s *Space) MaxDim() int { return s.maxDim }

// Positions returns the saturated coordinates of model k's parameters, in
// order. The caller must not modify the slice.
func (s *Space) Positions(k int) ([]int, error) {
	if err := s.check(k); err != nil {
		return nil, err
	}
	return s.positions[k], nil
}

// Active returns model k's mask over the saturated coordinates: true where
// ξ holds θ_k, false for auxiliaries. The caller must not modify it.
func (s *Space) Active(k int) ([]bool, error) {
	if err := s.check(k); err != nil {
		return nil, err
	}
	return s.active[k], nil
}

// ActiveMasks returns every model's mask (kernels.CTRJConfig.Active).
func (s *Space) ActiveMasks() [][]bool {
	out := make([][]bool, len(s.active))
	for k, a := range s.active {
		out[k] = append([]bool(nil), a...)
	}
	return out
}

// Split writes θ_k and the auxiliaries u (in saturated order) of ξ: the
// inverse of the concatenation c_k.
func (s *Space) Split(k int, xi, theta, u []float64) error {
	if err := s.checkXi(k, xi); err != nil {
		return err
	}
	n := s.models[k].Dim()
	if len(theta) != n || len(u) != s.maxDim-n {
		return fmt.Errorf("ppl: Split: θ and u have lengths %d and %d, want %d and %d", len(theta), len(u), n, s.maxDim-n)
	}
	j, a := 0, 0
	for i, on := range s.active[k] {
		if on {
			theta[j] = xi[i]
			j++
		} else {
			u[a] = xi[i]
			a++
		}
	}
	return nil
}

// Concat writes ξ = c_k(θ, u).
func (s *Space) Concat(k int, theta, u, xi []float64) error {
	if err := s.checkXi(k, xi); err != nil {
		return err
	}
	n := s.models[k].Dim()
	if len(theta) != n || len(u) != s.maxDim-n {
		return fmt.Errorf("ppl: Concat: θ and u have lengths %d and %d, want %d and %d", len(theta), len(u), n, s.maxDim-n)
	}
	j, a := 0, 0
	for i, on := range s.active[k] {
		if on {
			xi[i] = theta[j]
			j++
		} else {
			xi[i] = u[a]
			a++
		}
	}
	return nil
}

func (s *Space) checkXi(k int, xi []float64) error {
	if err := s.check(k); err != nil {
		return err
	}
	if len(xi) != s.maxDim {
		return fmt.Errorf("ppl: saturated point has length %d, want %d", len(xi), s.maxDim)
	}
	return nil
}

// SaturatedLogDensity returns log π̃(k, ξ) = log π(k, θ_k) + Σ log ν(u_i).
func (s *Space) SaturatedLogDensity(k int, xi []float64) (float64, error) {
	if err := s.checkXi(k, xi); err != nil {
		return math.Inf(-1), err
	}
	theta := s.theta[:s.models[k].Dim()]
	aux := s.gather(k, xi, theta)
	lp, err := s.LogDensity(k, theta)
	return lp + aux, err
}

// SaturatedLogDensityGrad is SaturatedLogDensity that also writes the
// gradient with respect to ξ into grad (length n_max).
func (s *Space) SaturatedLogDensityGrad(k int, xi, grad []float64) (float64, error) {
	if err := s.checkXi(k, xi); err != nil {
		return math.Inf(-1), err
	}
	if len(grad) != s.maxDim {
		return math.Inf(-1), fmt.Errorf("ppl: gradient has length %d, want %d", len(grad), s.maxDim)
	}
	n := s.models[k].Dim()
	theta, g := s.theta[:n], s.grad[:n]
	aux := s.gather(k, xi, theta)
	lp, err := s.LogDensityGrad(k, theta, g)
	j := 0
	v := s.auxSD * s.auxSD
	for i, on := range s.active[k] {
		if on {
			grad[i] = g[j]
			j++
		} else {
			grad[i] = -xi[i] / v
		}
	}
	return lp + aux, err
}

// gather copies θ_k out of ξ and returns Σ log ν over the auxiliaries.
func (s *Space) gather(k int, xi, theta []float64) float64 {
	j, aux := 0, 0.0
	c := -0.5*math.Log(2*math.Pi) - math.Log(s.auxSD)
	for i, on := range s.active[k] {
		if on {
			theta[j] = xi[i]
			j++
		} else {
			z := xi[i] / s.auxSD
			aux += c - 0.5*z*z
		}
	}
	return aux
}
