package draws

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Column names of the sampler diagnostics CmdStan writes, and trj's model
// index column for transdimensional runs.
const (
	LP         = "lp__"          // log density, up to a constant
	AcceptStat = "accept_stat__" // acceptance probability (or its average over a NUTS tree)
	StepSize   = "stepsize__"    // integrator step size
	TreeDepth  = "treedepth__"   // NUTS tree depth
	NLeapfrog  = "n_leapfrog__"  // leapfrog steps taken
	Divergent  = "divergent__"   // 1 if the trajectory diverged
	Energy     = "energy__"      // Hamiltonian at the draw
	Model      = "model__"       // index of the model of a transdimensional draw
)

// NUTSColumns returns the diagnostic columns of CmdStan's NUTS sampler in
// the order CmdStan writes them.
func NUTSColumns() []string {
	return []string{LP, AcceptStat, StepSize, TreeDepth, NLeapfrog, Divergent, Energy}
}

// integerColumn reports whether CmdStan writes the column as an integer;
// such columns must hold finite integral values.
func integerColumn(name string) bool {
	switch name {
	case TreeDepth, NLeapfrog, Divergent, Model:
		return true
	}
	return false
}

// ErrLayout reports invalid column names.
var ErrLayout = errors.New("draws: invalid layout")

// Layout names the columns of a set of draws.
type Layout struct {
	// Diagnostics are per-draw sampler columns, each ending in "__" as
	// CmdStan names them (see NUTSColumns).
	Diagnostics []string
	// Params are the parameter names, flattened Stan style (theta.1);
	// none may end in "__".
	Params []string
	// Transdimensional records a model index with every draw (the model__
	// column).
	Transdimensional bool
}

func (l Layout) clone() Layout {
	return Layout{
		Diagnostics:      slices.Clone(l.Diagnostics),
		Params:           slices.Clone(l.Params),
		Transdimensional: l.Transdimensional,
	}
}

func (l Layout) equal(o Layout) bool {
	return slices.Equal(l.Diagnostics, o.Diagnostics) && slices.Equal(l.Params, o.Params) &&
		l.Transdimensional == o.Transdimensional
}

// validate checks that every name can round-trip through a CSV header.
func (l Layout) validate() error {
	seen := make(map[string]bool)
	check := func(name string) error {
		switch {
		case name == "":
			return fmt.Errorf("%w: empty column name", ErrLayout)
		case strings.ContainsAny(name, ",\n\r\"#") || strings.TrimSpace(name) != name:
			return fmt.Errorf("%w: column name %q has a comma, quote, '#', newline or surrounding space", ErrLayout, name)
		case name == Model:
			return fmt.Errorf("%w: %s is reserved; set Layout.Transdimensional instead", ErrLayout, Model)
		case seen[name]:
			return fmt.Errorf("%w: duplicate column %q", ErrLayout, name)
		}
		seen[name] = true
		return nil
	}
	for _, name := range l.Diagnostics {
		if err := check(name); err != nil {
			return err
		}
		if !strings.HasSuffix(name, "__") {
			return fmt.Errorf("%w: diagnostic %q must end in \"__\"", ErrLayout, name)
		}
	}
	for _, name := range l.Params {
		if err := check(name); err != nil {
			return err
		}
		if strings.HasSuffix(name, "__") {
			return fmt.Errorf("%w: parameter %q must not end in \"__\", which marks sampler columns", ErrLayout, name)
		}
	}
	return nil
}

// Draws is a set of MCMC draws: for each chain, a sequence of draws, each
// with the values of the Layout's diagnostics and parameters and, for
// transdimensional runs, a model index.
//
// Chains may be filled concurrently, one goroutine per chain: Append on
// distinct chains touches disjoint memory. Reading while appending to the
// same chain is not safe.
type Draws struct {
	layout Layout
	chains []chain
}

// chain stores draws row-major, diagnostics then parameters.
type chain struct {
	values []float64
	models []int
}

// New returns an empty set of draws with the given layout and number of
// chains.
func New(l Layout, chains int) (*Draws, error) {
	if chains < 1 {
		return nil, fmt.Errorf("draws: %d chains, need at least one", chains)
	}
	if err := l.validate(); err != nil {
		return nil, err
	}
	return &Draws{layout: l.clone(), chains: make([]chain, chains)}, nil
}

// Layout returns a copy of the layout of d.
func (d *Draws) Layout() Layout { return d.layout.clone() }

// Chains returns the number of chains.
func (d *Draws) Chains() int { return len(d.chains) }

// Len returns the number of draws in chain c.
func (d *Draws) Len(c int) int {
	if c < 0 || c >= len(d.chains) {
		return 0
	}
	return len(d.chains[c].values) / d.width()
}

// width is the number of stored values per draw; at least one so that
// layouts without columns still count draws.
func (d *Draws) width() int {
	return max(len(d.layout.Diagnostics)+len(d.layout.Params), 1)
}

// Append adds a draw to chain c of a run that is not transdimensional.
// params and diagnostics must match the layout in length; values are copied.
func (d *Draws) Append(c int, params, diagnostics []float64) error {
	if err := d.layout.checkDraw(params, diagnostics, false, 0); err != nil {
		return err
	}
	return d.appendDraw(c, params, diagnostics, 0)
}

// AppendModel adds a draw of model k ≥ 0 to chain c of a transdimensional
// run. Parameters the model does not have are conventionally NaN.
func (d *Draws) AppendModel(c, k int, params, diagnostics []float64) error {
	if err := d.layout.checkDraw(params, diagnostics, true, k); err != nil {
		return err
	}
	return d.appendDraw(c, params, diagnostics, k)
}

// checkDraw validates one draw against the layout; withModel tells whether
// the caller gave a model index k.
func (l *Layout) checkDraw(params, diagnostics []float64, withModel bool, k int) error {
	switch {
	case l.Transdimensional && !withModel:
		return errors.New("draws: transdimensional draws need a model index; use AppendModel or WriteModel")
	case !l.Transdimensional && withModel:
		return errors.New("draws: model index given for a layout that is not transdimensional")
	case k < 0:
		return fmt.Errorf("draws: model index %d is negative", k)
	case len(params) != len(l.Params):
		return fmt.Errorf("draws: %d parameter values, layout has %d", len(params), len(l.Params))
	case len(diagnostics) != len(l.Diagnostics):
		return fmt.Errorf("draws: %d diagnostic values, layout has %d", len(diagnostics), len(l.Diagnostics))
	}
	for i, v := range diagnostics {
		if name := l.Diagnostics[i]; integerColumn(name) && !isInteger(v) {
			return fmt.Errorf("draws: %s = %v, want an integer", name, v)
		}
	}
	return nil
}

// appendDraw stores a draw that checkDraw accepted.
func (d *Draws) appendDraw(c int, params, diagnostics []float64, k int) error {
	if c < 0 || c >= len(d.chains) {
		return fmt.Errorf("draws: chain %d out of range [0, %d)", c, len(d.chains))
	}
	ch := &d.chains[c]
	ch.values = append(ch.values, diagnostics...)
	ch.values = append(ch.values, params...)
	if len(diagnostics)+len(params) == 0 {
		ch.values = append(ch.values, 0) // placeholder so Len counts the draw
	}
	if d.layout.Transdimensional {
		ch.models = append(ch.models, k)
	}
	return nil
}

func isInteger(v float64) bool {
	return !math.IsInf(v, 0) && v == math.Trunc(v)
}

// Params returns the parameter values of draw i of chain c, a view into d's
// storage that the caller must not modify. Like a slice index, it panics if
// the draw does not exist (see Chains and Len).
func (d *Draws) Params(c, i int) []float64 {
	row := d.row(c, i)
	return row[len(d.layout.Diagnostics) : len(d.layout.Diagnostics)+len(d.layout.Params)]
}

// Diagnostics returns the diagnostic values of draw i of chain c, a view
// into d's storage that the caller must not modify. Like Params, it panics
// if the draw does not exist.
func (d *Draws) Diagnostics(c, i int) []float64 {
	return d.row(c, i)[:len(d.layout.Diagnostics)]
}

// ModelIndex returns the model index of draw i of chain c, or 0 for runs
// that are not transdimensional. Like Params, it panics if the draw does not
// exist.
func (d *Draws) ModelIndex(c, i int) int {
	d.row(c, i) // bounds check
	if !d.layout.Transdimensional {
		return 0
	}
	return d.chains[c].models[i]
}

// row panics, like a slice index, on a draw that does not exist.
func (d *Draws) row(c, i int) []float64 {
	w := d.width()
	if i < 0 || i >= d.Len(c) {
		panic(fmt.Sprintf("draws: draw %d of chain %d out of range (chain has %d draws)", i, c, d.Len(c)))
	}
	return d.chains[c].values[i*w : (i+1)*w]
}

// Column returns the values of one diagnostic or parameter column (or
// model__ as float64) as a new chains × draws slice, the input format of
// package diag.
func (d *Draws) Column(name string) ([][]float64, error) {
	j := -1
	if i := slices.Index(d.layout.Diagnostics, name); i >= 0 {
		j = i
	} else if i := slices.Index(d.layout.Params, name); i >= 0 {
		j = len(d.layout.Diagnostics) + i
	}
	isModel := name == Model && d.layout.Transdimensional
	if j < 0 && !isModel {
		return nil, fmt.Errorf("draws: no column %q", name)
	}
	out := make([][]float64, len(d.chains))
	w := d.width()
	for c := range d.chains {
		n := d.Len(c)
		out[c] = make([]float64, n)
		for i := range n {
			if isModel {
				out[c][i] = float64(d.chains[c].models[i])
			} else {
				out[c][i] = d.chains[c].values[i*w+j]
			}
		}
	}
	return out, nil
}

// Models returns a copy of the model indices, chains × draws, or nil for
// runs that are not transdimensional.
func (d *Draws) Models() [][]int {
	if !d.layout.Transdimensional {
		return nil
	}
	out := make([][]int, len(d.chains))
	for c := range d.chains {
		out[c] = slices.Clone(d.chains[c].models)
	}
	return out
}

// Head returns a copy of the first n draws of every chain of d, for
// instance to summarize chains of unequal length (an interrupted run) at
// the length of the shortest (see MinLen). Every chain must have n draws.
func (d *Draws) Head(n int) (*Draws, error) {
	if n < 0 {
		return nil, fmt.Errorf("draws: %d draws, want at least 0", n)
	}
	out := &Draws{layout: d.layout.clone(), chains: make([]chain, len(d.chains))}
	w := d.width()
	for c, ch := range d.chains {
		if d.Len(c) < n {
			return nil, fmt.Errorf("draws: chain %d has %d draws, fewer than %d", c, d.Len(c), n)
		}
		out.chains[c].values = slices.Clone(ch.values[:n*w])
		if d.layout.Transdimensional {
			out.chains[c].models = slices.Clone(ch.models[:n])
		}
	}
	return out, nil
}

// Subset returns a copy of the given chains of d, in the given order.
func (d *Draws) Subset(chains ...int) (*Draws, error) {
	if len(chains) == 0 {
		return nil, errors.New("draws: no chains selected")
	}
	out := &Draws{layout: d.layout.clone(), chains: make([]chain, len(chains))}
	for i, c := range chains {
		if c < 0 || c >= len(d.chains) {
			return nil, fmt.Errorf("draws: chain %d out of range [0, %d)", c, len(d.chains))
		}
		out.chains[i] = chain{values: slices.Clone(d.chains[c].values), models: slices.Clone(d.chains[c].models)}
	}
	return out, nil
}

// MinLen returns the number of draws of the shortest chain.
func (d *Draws) MinLen() int {
	n := -1
	for c := range d.chains {
		if l := d.Len(c); n < 0 || l < n {
			n = l
		}
	}
	return max(n, 0)
}

// Combine returns the chains of all sets, in order, as one set. The sets
// must share a layout; values are copied.
func Combine(sets ...*Draws) (*Draws, error) {
	if len(sets) == 0 {
		return nil, errors.New("draws: nothing to combine")
	}
	if i := slices.Index(sets, nil); i >= 0 {
		return nil, fmt.Errorf("draws: set %d is nil", i)
	}
	out := &Draws{layout: sets[0].layout.clone()}
	for i, s := range sets {
		if !s.layout.equal(out.layout) {
			return nil, fmt.Errorf("draws: set %d has columns %v, set 0 has %v", i, s.columnNames(), out.columnNames())
		}
		for _, ch := range s.chains {
			out.chains = append(out.chains, chain{values: slices.Clone(ch.values), models: slices.Clone(ch.models)})
		}
	}
	return out, nil
}

// columnNames returns the CSV header of d.
func (d *Draws) columnNames() []string { return d.layout.columnNames() }

// columnNames returns the CSV header of l: diagnostics, model__ for
// transdimensional runs, parameters.
func (l Layout) columnNames() []string {
	names := slices.Clone(l.Diagnostics)
	if l.Transdimensional {
		names = append(names, Model)
	}
	return append(names, l.Params...)
}
