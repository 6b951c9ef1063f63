package kernels

import (
	"errors"
	"fmt"
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

// DiagnosticColumns returns the CmdStan sampler columns of algorithm a's
// draws: CmdStan's seven NUTS columns (draws.NUTSColumns), or lp__,
// accept_stat__ and stepsize__ (the proposal scale) for RWM.
func DiagnosticColumns(a Algorithm) []string {
	if a == AlgRWM {
		return []string{draws.LP, draws.AcceptStat, draws.StepSize}
	}
	return draws.NUTSColumns()
}

// AppendDiagnostics appends the values of DiagnosticColumns(a) for d to
// dst and returns the extended slice.
func (d DrawInfo) AppendDiagnostics(dst []float64, a Algorithm) []float64 {
	dst = append(dst, d.LogDensity, d.AcceptStat, d.StepSize)
	if a == AlgRWM {
		return dst
	}
	div := 0.0
	if d.Divergent {
		div = 1
	}
	return append(dst, float64(d.TreeDepth), float64(d.NumLeapfrog), div, d.Energy)
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
// Draws and Stream may be nil. Their layout must have
// DiagnosticColumns(Algorithm) and Model's parameter names.
type CmdStanOutput struct {
	Model     Constrainer
	Algorithm Algorithm
	Chain     int
	Draws     *draws.Draws
	Stream    *draws.Stream

	x, diag []float64
}

// Draw implements ChainOutput.
func (o *CmdStanOutput) Draw(it int, warmup bool, u []float64, info DrawInfo) error {
	if o.Model == nil {
		return errors.New("kernels: CmdStanOutput has no Model")
	}
	if o.x == nil {
		o.x = make([]float64, len(o.Model.ParamNames()))
	}
	if err := o.Model.Constrain(u, o.x); err != nil {
		return fmt.Errorf("iteration %d: %w", it+1, err)
	}
	o.diag = info.AppendDiagnostics(o.diag[:0], o.Algorithm)
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
// chain (r.Chains[k], the run's chain FirstChain+k), with
// DiagnosticColumns(r.Settings.Algorithm) and the model's parameter names as
// columns. model may return the same Constrainer for every chain; the
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
			return nil, fmt.Errorf("kernels: no model for chain %d", r.Settings.FirstChain+c)
		}
		if d == nil {
			var err error
			d, err = draws.New(draws.Layout{Diagnostics: DiagnosticColumns(r.Settings.Algorithm), Params: m.ParamNames()}, len(r.Chains))
			if err != nil {
				return nil, err
			}
		}
		o := CmdStanOutput{Model: m, Algorithm: r.Settings.Algorithm, Chain: c, Draws: d}
		ch := &r.Chains[c]
		for i, info := range ch.Info {
			if err := o.Draw(i, false, ch.Draw(i), info); err != nil {
				return nil, fmt.Errorf("kernels: chain %d: %w", r.Settings.FirstChain+c, err)
			}
		}
	}
	return d, nil
}
