package kernels

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/trjgo/trj/ppl/draws"
)

// Constrainer maps an unconstrained position to the values of named
// parameters; ppl.Model satisfies it. Constrain may use scratch space, so
// each chain needs its own unless the Constrainer says otherwise.
type Constrainer interface {
	ParamNames() []string
	Constrain(u, dst []float64) error
}

// AppendDiagnostics appends to dst the values for d of the named sampler
// columns (a Method's DiagnosticColumns; NaN for a name it does not know)
// and returns the extended slice.
func (d DrawInfo) AppendDiagnostics(dst []float64, columns []string) []float64 {
	for _, col := range columns {
		v := math.NaN()
		switch col {
		case draws.LP:
			v = d.LogDensity
		case draws.AcceptStat:
			v = d.AcceptStat
		case draws.StepSize:
			v = d.StepSize
		case draws.TreeDepth:
			v = float64(d.TreeDepth)
		case draws.NLeapfrog:
			v = float64(d.NumLeapfrog)
		case draws.Divergent:
			v = 0
			if d.Divergent {
				v = 1
			}
		case draws.Energy:
			v = d.Energy
		}
		dst = append(dst, v)
	}
	return dst
}

// Adaptation returns what ch adapted, as the CmdStan adaptation block of
// package draws: NUTS's step size and inverse metric (diagonal for diag_e
// and unit_e, dense for dense_e), or RWM's scale as the step size with its
// proposal covariance, if any, as notes.
func (ch *Chain) Adaptation() draws.Adaptation {
	if ch.Metric != nil {
		a := draws.Adaptation{StepSize: ch.StepSize}
		if ch.Metric.Kind() == DenseMetric {
			inv := ch.Metric.InvMass()
			n := inv.SymmetricDim()
			a.InvMetricDense = make([][]float64, n)
			for i := range n {
				a.InvMetricDense[i] = make([]float64, n)
				for j := range n {
					a.InvMetricDense[i][j] = inv.At(i, j)
				}
			}
		} else {
			a.InvMetricDiag = ch.Metric.InvMassDiag()
		}
		return a
	}
	a := draws.Adaptation{StepSize: ch.RWMScale}
	if ch.RWMCovariance != nil {
		n := ch.RWMCovariance.SymmetricDim()
		a.Notes = append(a.Notes, "Random-walk proposal covariance:")
		for i := range n {
			b := []byte{}
			for j := range n {
				if j > 0 {
					b = append(b, ", "...)
				}
				b = strconv.AppendFloat(b, ch.RWMCovariance.At(i, j), 'g', -1, 64)
			}
			a.Notes = append(a.Notes, string(b))
		}
	}
	return a
}

// CmdStanOutput is a ChainOutput that constrains each draw of one chain
// with Model and stores it in CmdStan's layout: appended to chain Chain of
// Draws (kept draws only) and written to Stream (every recorded draw, the
// adaptation block after the warm-up and, at the end, the elapsed times,
// with the file marked interrupted if the chain stopped early). Either of
// Draws and Stream may be nil. Their layout must have the
// DiagnosticColumns of Method (nil means NUTSMethod) and Model's parameter
// names.
type CmdStanOutput struct {
	Model  Constrainer
	Method Method
	Chain  int
	Draws  *draws.Draws
	Stream *draws.Stream

	x, diag []float64
	columns []string
}

// Draw implements ChainOutput.
func (o *CmdStanOutput) Draw(it int, warmup bool, u []float64, info DrawInfo) error {
	if o.Model == nil {
		return errors.New("kernels: CmdStanOutput has no Model")
	}
	if o.x == nil {
		o.x = make([]float64, len(o.Model.ParamNames()))
	}
	if o.columns == nil {
		o.columns = orNUTS(o.Method).DiagnosticColumns()
	}
	if err := o.Model.Constrain(u, o.x); err != nil {
		return fmt.Errorf("iteration %d: %w", it+1, err)
	}
	o.diag = info.AppendDiagnostics(o.diag[:0], o.columns)
	if o.Stream != nil {
		if err := o.Stream.Write(o.x, o.diag); err != nil {
			return err
		}
	}
	if o.Draws != nil && !warmup {
		return o.Draws.Append(o.Chain, o.x, o.diag)
	}
	return nil
}

// Adapted implements ChainOutput.
func (o *CmdStanOutput) Adapted(ch *Chain) error {
	if o.Stream == nil {
		return nil
	}
	return o.Stream.WriteAdaptation(ch.Adaptation())
}

// Close implements ChainOutput; it closes Stream.
func (o *CmdStanOutput) Close(ch *Chain, stopped error) error {
	if o.Stream == nil {
		return nil
	}
	var err error
	if stopped != nil {
		err = o.Stream.MarkInterrupted(stopped.Error())
	}
	o.Stream.SetElapsed(ch.WarmupTime, ch.SampleTime)
	if cerr := o.Stream.Close(); err == nil {
		err = cerr
	}
	return err
}

// ToDraws returns the kept draws of r constrained by model(k) for r's k-th
// chain (r.Chains[k]), with r.Settings.Method's DiagnosticColumns and the
// model's parameter names as columns. model may return the same Constrainer for every chain; the
// chains are converted one after another.
func (r *SampleResult) ToDraws(model func(chain int) Constrainer) (*draws.Draws, error) {
	if r == nil || len(r.Chains) == 0 {
		return nil, errors.New("kernels: no chains to convert")
	}
	if model == nil {
		return nil, errors.New("kernels: nil model function")
	}
	var d *draws.Draws
	for c := range r.Chains {
		m := model(c)
		if m == nil {
			return nil, fmt.Errorf("kernels: no model for chain %d", r.Chains[c].Chain)
		}
		if d == nil {
			var err error
			d, err = draws.New(draws.Layout{Diagnostics: orNUTS(r.Settings.Method).DiagnosticColumns(), Params: m.ParamNames()}, len(r.Chains))
			if err != nil {
				return nil, err
			}
		}
		o := CmdStanOutput{Model: m, Method: r.Settings.Method, Chain: c, Draws: d}
		ch := &r.Chains[c]
		for i, info := range ch.Info {
			if err := o.Draw(i, false, ch.Draw(i), info); err != nil {
				return nil, fmt.Errorf("kernels: chain %d: %w", r.Chains[c].Chain, err)
			}
		}
	}
	return d, nil
}
