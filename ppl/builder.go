package ppl

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Builder assembles a model's log-density as a gorgonia graph: declare
// parameters (each returns its constrained value as a node), bind data, add
// log-density terms, then call Model.
//
// Builder methods never panic and return usable nodes even on bad input;
// the first error is kept and returned by Model (and Err), so model code
// reads without error checks, like bufio.Scanner.
//
// A Builder is not safe for concurrent use; the Model it builds is cloned
// per goroutine instead.
type Builder struct {
	g       *gorgonia.ExprGraph
	params  []*param
	names   map[string]string // every declared name → what it is
	terms   []*gorgonia.Node
	origins []termOrigin // parallel to terms: where each term came from
	reports []report
	offset  float64 // sum of the terms in which no parameter appears
	err     error
	// graphMu serialises the compilations of tempered forms (see
	// GraphModel.Tempered), which add gradient nodes to g.
	graphMu *sync.Mutex
}

// termOrigin records where a log-density term came from, which decides its
// part in the model's tempered form: a Sample whose observation depends on
// a parameter is prior, anything else likelihood.
type termOrigin struct {
	dist Distribution   // nil for AddLogDensity
	x    *gorgonia.Node // the observation node of a Sample, or nil
}

type report struct {
	name  string
	node  *gorgonia.Node
	shape tensor.Shape
}

// NewBuilder returns an empty model builder with its own graph.
func NewBuilder() *Builder {
	return &Builder{g: gorgonia.NewGraph(), names: map[string]string{}, graphMu: &sync.Mutex{}}
}

// Graph returns the builder's expression graph, for building expressions
// with gorgonia directly.
func (b *Builder) Graph() *gorgonia.ExprGraph { return b.g }

// Err returns the first error met while building, if any.
func (b *Builder) Err() error { return b.err }

// setErr keeps the first error, prefixed with the file:line of the model
// code that called the builder.
func (b *Builder) setErr(err error) {
	if b.err == nil && err != nil {
		b.err = located(err)
	}
}

// located prefixes err with the file:line of the model code that called
// the builder.
func located(err error) error {
	if at := callerOutsidePPL(); at != "" {
		return fmt.Errorf("%s: %w", at, err)
	}
	return err
}

// callerOutsidePPL returns "dir/file.go:line" of the innermost stack frame
// outside this package's non-test source files (the builder and the
// distributions), or "" when there is none.
func callerOutsidePPL() string {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	dir := filepath.Dir(self)
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.File != "" && (filepath.Dir(f.File) != dir || strings.HasSuffix(f.File, "_test.go")) {
			return filepath.Join(filepath.Base(filepath.Dir(f.File)), filepath.Base(f.File)) + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return ""
		}
	}
}

// placeholder is a harmless node returned after an error so that model code
// can carry on (its error is reported by Model).
func (b *Builder) placeholder(shape tensor.Shape) *gorgonia.Node {
	if len(shape) == 0 {
		return gorgonia.NewConstant(0.0)
	}
	return constNode(make([]float64, shape.TotalSize()), shape)
}

// Check returns n, recording err (which then Model returns) when it is not
// nil; it never panics. It lets gorgonia expressions be written inline:
//
//	theta := b.Check(gorgonia.Add(mu, b.Check(gorgonia.Mul(tau, eta))))
//
// After an error it returns a harmless scalar placeholder so that model code
// can carry on; the error, which names the file:line of the call, is
// returned by Model.
func (b *Builder) Check(n *gorgonia.Node, err error) *gorgonia.Node {
	if err != nil {
		b.setErr(fmt.Errorf("ppl: %w", err))
		return b.placeholder(nil)
	}
	if n == nil {
		b.setErr(errors.New("ppl: Check: nil node"))
		return b.placeholder(nil)
	}
	return n
}

// Must is the former name of Check.
//
// Deprecated: use Check (Must never panicked).
func (b *Builder) Must(n *gorgonia.Node, err error) *gorgonia.Node { return b.Check(n, err) }

// checkName validates a new name and reserves it.
func (b *Builder) checkName(name, what string) error {
	if name == "" {
		return fmt.Errorf("ppl: %s name is empty", what)
	}
	if strings.ContainsAny(name, ". ,\t\n\"") {
		return fmt.Errorf("ppl: %s name %q contains '.', ',', a space or a quote", what, name)
	}
	if prev, ok := b.names[name]; ok {
		return fmt.Errorf("ppl: %s name %q is already used by a %s", what, name, prev)
	}
	b.names[name] = what
	return nil
}

func checkShape(name string, shape []int) (tensor.Shape, error) {
	for _, d := range shape {
		if d <= 0 {
			return nil, fmt.Errorf("ppl: %q: shape %v has a non-positive dimension", name, shape)
		}
	}
	if len(shape) == 0 {
		return tensor.ScalarShape(), nil
	}
	return tensor.Shape(append([]int(nil), shape...)), nil
}

// declare registers a parameter and builds its transform.
func (b *Builder) declare(p *param) *gorgonia.Node {
	if err := b.checkName(p.name, "parameter"); err != nil {
		b.setErr(err)
		return b.placeholder(p.shape)
	}
	p.loOut, p.hiOut = -1, -1
	if err := p.build(b.g); err != nil {
		b.setErr(err)
		return b.placeholder(p.shape)
	}
	b.params = append(b.params, p)
	return p.value
}

// Real declares an unconstrained parameter; no shape means a scalar, one
// dimension a vector, two a matrix.
func (b *Builder) Real(name string, shape ...int) *gorgonia.Node {
	s, err := checkShape(name, shape)
	if err != nil {
		b.setErr(err)
		return b.placeholder(nil)
	}
	return b.declare(&param{name: name, kind: realLine, shape: s})
}

// Positive declares a parameter constrained to (0, ∞) (log transform).
func (b *Builder) Positive(name string, shape ...int) *gorgonia.Node {
	return b.Lower(name, 0.0, shape...)
}

// Lower declares a parameter constrained to (lo, ∞), x = lo + exp(u). lo
// is a float64, a []float64 of the parameter's shape, or a node of another
// parameter (a dependent bound).
func (b *Builder) Lower(name string, lo Operand, shape ...int) *gorgonia.Node {
	return b.bounded(name, lowerBounded, lo, nil, shape)
}

// Upper declares a parameter constrained to (−∞, hi), x = hi − exp(u).
func (b *Builder) Upper(name string, hi Operand, shape ...int) *gorgonia.Node {
	return b.bounded(name, upperBounded, nil, hi, shape)
}

// Interval declares a parameter constrained to (lo, hi) by the logit
// transform, x = lo + (hi − lo)·logistic(u). Bounds may be nodes of earlier
// parameters, e.g. beta1 in (0, 1 − alpha1) for a GARCH model.
func (b *Builder) Interval(name string, lo, hi Operand, shape ...int) *gorgonia.Node {
	return b.bounded(name, interval, lo, hi, shape)
}

func (b *Builder) bounded(name string, kind constraint, lo, hi Operand, shape []int) *gorgonia.Node {
	s, err := checkShape(name, shape)
	if err != nil {
		b.setErr(err)
		return b.placeholder(nil)
	}
	p := &param{name: name, kind: kind, shape: s}
	check := func(what string, v Operand) (operand, error) {
		o, err := resolve(fmt.Sprintf("parameter %q: %s bound", name, what), v)
		if err != nil {
			return o, err
		}
		if !o.isScalar() && !o.shape.Eq(s) {
			return o, fmt.Errorf("ppl: parameter %q: %s bound has shape %v, want a scalar or %v", name, what, o.shape, s)
		}
		if o.node != nil && o.node.Graph() != nil && o.node.Graph() != b.g {
			return o, fmt.Errorf("ppl: parameter %q: %s bound belongs to another graph", name, what)
		}
		return o, nil
	}
	if kind != upperBounded {
		if p.lo, err = check("lower", lo); err != nil {
			b.setErr(err)
			return b.placeholder(s)
		}
	}
	if kind != lowerBounded {
		if p.hi, err = check("upper", hi); err != nil {
			b.setErr(err)
			return b.placeholder(s)
		}
	}
	if kind == interval && p.lo.isConst() && p.hi.isConst() {
		for i := 0; i < max(len(p.lo.val), len(p.hi.val)); i++ {
			if !(boundAt(p.lo.val, i) < boundAt(p.hi.val, i)) {
				b.setErr(fmt.Errorf("ppl: parameter %q: empty interval (%v, %v)", name, boundAt(p.lo.val, i), boundAt(p.hi.val, i)))
				return b.placeholder(s)
			}
		}
	}
	return b.declare(p)
}

// Ordered declares a strictly increasing vector of length n ≥ 2
// (x₁ = u₁, x_i = x_{i−1} + exp(u_i)).
func (b *Builder) Ordered(name string, n int) *gorgonia.Node {
	if n < 2 {
		b.setErr(fmt.Errorf("ppl: ordered parameter %q needs length ≥ 2, got %d", name, n))
		return b.placeholder(nil)
	}
	return b.declare(&param{name: name, kind: ordered, shape: tensor.Shape{n}})
}

// PositiveOrdered declares a positive, strictly increasing vector of length
// n ≥ 1 (x_i = x_{i−1} + exp(u_i), x₀ = 0).
func (b *Builder) PositiveOrdered(name string, n int) *gorgonia.Node {
	if n < 1 {
		b.setErr(fmt.Errorf("ppl: positive-ordered parameter %q needs length ≥ 1, got %d", name, n))
		return b.placeholder(nil)
	}
	return b.declare(&param{name: name, kind: positiveOrdered, shape: tensor.Shape{n}})
}

// Simplex declares a vector of k ≥ 2 positive entries summing to one, with
// k − 1 unconstrained coordinates (additive log-ratio: x = softmax(u, 0)).
func (b *Builder) Simplex(name string, k int) *gorgonia.Node {
	if k < 2 {
		b.setErr(fmt.Errorf("ppl: simplex parameter %q needs length ≥ 2, got %d", name, k))
		return b.placeholder(nil)
	}
	return b.declare(&param{name: name, kind: simplex, shape: tensor.Shape{k}})
}

// CholeskyFactorCov declares a rows×cols (rows ≥ cols) lower-triangular
// matrix with positive diagonal and zeros above it, such as the loadings of
// a factor model or a Cholesky factor (Stan's cholesky_factor_cov). Only the
// entries on and below the diagonal are parameters; the unconstrained vector
// holds the log-diagonal first, then the strictly-lower entries row by row.
func (b *Builder) CholeskyFactorCov(name string, rows, cols int) *gorgonia.Node {
	return b.triangular(name, choleskyFactorCov, rows, cols)
}

// UnitLowerTriangular declares a rows×cols (rows ≥ cols) lower-triangular
// matrix with ones on the diagonal; its strictly-lower entries, row by row,
// are the parameters.
func (b *Builder) UnitLowerTriangular(name string, rows, cols int) *gorgonia.Node {
	return b.triangular(name, unitLowerTriangular, rows, cols)
}

func (b *Builder) triangular(name string, kind constraint, rows, cols int) *gorgonia.Node {
	if rows < 1 || cols < 1 || rows < cols {
		b.setErr(fmt.Errorf("ppl: %v parameter %q needs rows ≥ cols ≥ 1, got %d×%d", kind, name, rows, cols))
		return b.placeholder(nil)
	}
	return b.declare(&param{name: name, kind: kind, shape: tensor.Shape{rows, cols}})
}

// Data binds observed values to a named data node. No shape means a vector
// of len(values); otherwise the values are row-major with that shape. NaN or
// Inf values are an error. (Scalar constants need no node: pass a float64
// to a distribution.)
func (b *Builder) Data(name string, values []float64, shape ...int) *gorgonia.Node {
	if len(shape) == 0 {
		shape = []int{len(values)}
	}
	s, err := checkShape(name, shape)
	if err == nil && s.TotalSize() != len(values) {
		err = fmt.Errorf("ppl: data %q: %d values for shape %v", name, len(values), s)
	}
	if err == nil {
		for i, v := range values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				err = fmt.Errorf("ppl: data %q: value %d is %v", name, i, v)
				break
			}
		}
	}
	if err == nil {
		err = b.checkName(name, "data")
	}
	if err != nil {
		b.setErr(err)
		if s == nil || s.TotalSize() <= 0 {
			return b.placeholder(tensor.Shape{max(len(values), 1)})
		}
		return b.placeholder(s)
	}
	v := tensor.New(tensor.WithShape(s...), tensor.WithBacking(append([]float64(nil), values...)))
	return gorgonia.NewTensor(b.g, tensor.Float64, len(s), gorgonia.WithName(name), gorgonia.WithShape(s...), gorgonia.WithValue(v))
}

// DataMatrix binds a matrix of observations (e.g. a design matrix).
func (b *Builder) DataMatrix(name string, m mat.Matrix) *gorgonia.Node {
	if m == nil {
		b.setErr(fmt.Errorf("ppl: data %q: nil matrix", name))
		return b.placeholder(tensor.Shape{1, 1})
	}
	r, c := m.Dims()
	v := make([]float64, 0, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v = append(v, m.At(i, j))
		}
	}
	return b.Data(name, v, r, c)
}

// AddLogDensity adds a term to the log-density, like Stan's target +=; a
// non-scalar term is summed. In the model's tempered form (see
// GraphModel.Tempered) such a term belongs to the likelihood part; priors
// are Sample statements on parameters.
func (b *Builder) AddLogDensity(term *gorgonia.Node) {
	if term == nil {
		b.setErr(errors.New("ppl: AddLogDensity: nil term"))
		return
	}
	b.addTerm("AddLogDensity", term, termOrigin{})
}

// Add is the former name of AddLogDensity.
//
// Deprecated: use AddLogDensity (Add was easily confused with gorgonia.Add).
func (b *Builder) Add(term *gorgonia.Node) { b.AddLogDensity(term) }

// addTerm adds a log-density term: summed if not scalar, folded into the
// constant offset if no parameter appears in it. Constants are kept, not
// dropped, because model comparison needs normalised densities.
func (b *Builder) addTerm(what string, term *gorgonia.Node, origin termOrigin) {
	if v, ok := constValues(term); ok {
		for _, x := range v {
			b.offset += x
		}
		return
	}
	if term.Graph() != b.g {
		b.setErr(fmt.Errorf("ppl: %s: term belongs to another graph", what))
		return
	}
	if !term.IsScalar() {
		s, err := safeUn(func(a *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sum(a) }, term)
		if err != nil {
			b.setErr(err)
			return
		}
		term = s
	}
	b.terms = append(b.terms, term)
	b.origins = append(b.origins, origin)
}

// Sample adds the log-density of x under d, like Stan's x ~ d. x is a
// parameter or data node, or constant observations (float64, []float64).
// In the model's tempered form (see GraphModel.Tempered) a Sample on an x
// that depends on parameters is a prior term and any other a likelihood
// term.
func (b *Builder) Sample(d Distribution, x Operand) {
	if d == nil {
		b.setErr(errors.New("ppl: Sample: nil distribution"))
		return
	}
	o, err := resolve("Sample: observation", x)
	if err != nil {
		b.setErr(err)
		return
	}
	n, ok := x.(*gorgonia.Node)
	origin := termOrigin{dist: d}
	if ok {
		origin.x = n
	} else {
		n = constNode(o.val, o.shape)
	}
	lp, err := d.LogProb(n)
	if err != nil {
		b.setErr(err)
		return
	}
	b.addTerm("Sample", lp, origin)
}

// Report records a derived quantity (Stan's transformed parameters or
// generated quantities) to be returned by Constrain after the parameters.
func (b *Builder) Report(name string, n *gorgonia.Node) {
	if n == nil {
		b.setErr(fmt.Errorf("ppl: Report %q: nil node", name))
		return
	}
	if err := b.checkName(name, "reported quantity"); err != nil {
		b.setErr(err)
		return
	}
	if n.Dtype() != tensor.Float64 {
		b.setErr(fmt.Errorf("ppl: Report %q: dtype %v, want float64", name, n.Dtype()))
		return
	}
	if n.Graph() != b.g {
		b.setErr(fmt.Errorf("ppl: Report %q: the node is not in the builder's graph (a constant?)", name))
		return
	}
	b.reports = append(b.reports, report{name: name, node: n, shape: nodeShape(n)})
}

// flatNames appends Stan-style flattened names (theta.1, B.1.2 row-major,
// indices from one) of a value of the given shape.
func flatNames(dst []string, name string, s tensor.Shape) []string {
	n := 1
	if len(s) > 0 {
		n = s.TotalSize()
	}
	for i := 0; i < n; i++ {
		dst = append(dst, flatName(name, s, i))
	}
	return dst
}

// flatName returns the Stan-style name of flat (row-major) element i.
func flatName(name string, s tensor.Shape, i int) string {
	if len(s) == 0 {
		return name
	}
	idx := make([]string, len(s))
	for d := len(s) - 1; d >= 0; d-- {
		idx[d] = strconv.Itoa(i%s[d] + 1)
		i /= s[d]
	}
	return name + "." + strings.Join(idx, ".")
}
