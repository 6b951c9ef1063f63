package trj

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"

	"gonum.org/v1/gonum/floats"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// PilotMethod makes each model's pilot draws (PilotSettings.Method). The
// methods of this package are NUTSPilots (the default), SMCPilots and
// GivenPilots, one file each; a method of one's own implements this
// interface (docs/pilot_test.go shows one). A method that implements
// SpaceChecker has its settings checked before any work.
type PilotMethod interface {
	// Name names the method in results ("NUTS", "SMC" or "given";
	// Result.Pilot).
	Name() string
	// Pilot draws the pilot of model job.K (see Pilot for what it holds
	// and what Run checks of it). Run calls it once per model, for several
	// models at once from one method value, each call with its own job:
	// it must not change the method's own state without a lock. It may
	// use several goroutines; ctx cancels it. Run keeps the pilot it
	// returns, and the later stages, or a later run reusing it
	// (PilotSettings.From), read it from several goroutines at once.
	Pilot(ctx context.Context, job *PilotJob) (*Pilot, error)
}

// PilotJob is what a pilot method gets to draw one model's pilot.
type PilotJob struct {
	// K is the model's index in the space, and Model the model: the
	// space's own, which other calls may use at once, so evaluate a clone
	// (Model.Clone) in each goroutine.
	K     int
	Model ppl.Model
	// Groups is the number of evaluation groups asked for
	// (BridgeSettings.Groups; 0: the method's own choice).
	Groups int
	// Progress, when non-nil, reports done units of work out of total;
	// the method may call it from several goroutines at once.
	Progress func(done, total int)
	// Seed is the run's seed (Settings.Seed): derive every random stream
	// of the pilot from it and K (such as rand.NewPCG(Seed, uint64(K))),
	// so that the same run draws the same pilot.
	Seed uint64
}

// Pilot is one model's pilot: unconstrained training draws for the
// transport, evaluation draws in independent groups for the bridge
// estimator, and what the chains' within-model NUTS kernel reuses. Run
// checks a method's pilot: at least one training draw, at least two
// evaluation groups, none empty, every draw finite and of the model's
// dimension.
type Pilot struct {
	Train [][]float64
	Eval  [][][]float64
	// StepSize and Metric are the adapted NUTS step size and metric (nil:
	// none; NUTSMove then adapts them from the draws).
	StepSize float64
	Metric   *kernels.Metric
	// LogZ holds one log-evidence estimate per independent run (SMC
	// pilots; nil for methods that estimate none). When every model's
	// pilot has two or more, Result.Evidence combines them.
	LogZ []float64
	// EvalChains, when above 1, is the number of chains the evaluation
	// groups come from, in consecutive blocks of equal size (NUTS pilots).
	// The groups of one chain share the modes that chain found, so the
	// per-model evidence's standard error is also computed over whole
	// chains and the larger one reported. 0 or 1: the groups are
	// independent (SMC runs, given draws).
	EvalChains int
}

type pilot = Pilot

// EvalDraws returns the evaluation draws of every group in one list.
func (p *Pilot) EvalDraws() [][]float64 {
	var out [][]float64
	for _, g := range p.Eval {
		out = append(out, g...)
	}
	return out
}

func runPilot(ctx context.Context, s *Settings, space *ppl.Space, k int, progress func(done, total int)) (*pilot, error) {
	m, err := space.Model(k)
	if err != nil {
		return nil, err
	}
	if from := s.Pilot.From; from != nil {
		if len(from.Pilots) != space.NumModels() || from.Pilots[k] == nil || len(from.Labels) != space.NumModels() {
			return nil, fmt.Errorf("Pilot.From has no pilot for model %d", k)
		}
		if from.Labels[k] != space.ModelLabel(k) || from.Dims[k] != m.Dim() {
			return nil, fmt.Errorf("Pilot.From's model %d is %q of dimension %d, the space's is %q of dimension %d", k, from.Labels[k], from.Dims[k], space.ModelLabel(k), m.Dim())
		}
		return from.Pilots[k], nil
	}
	job := &PilotJob{K: k, Model: m, Groups: s.Bridge.Groups, Progress: progress, Seed: s.Seed}
	p, err := s.Pilot.Method.Pilot(ctx, job)
	if err != nil {
		return nil, err
	}
	if err := checkPilot(p, m.Dim()); err != nil {
		return nil, fmt.Errorf("pilot method %q gave a pilot Run cannot use: %w", s.Pilot.Method.Name(), err)
	}
	return p, nil
}

// checkPilot refuses a pilot the later stages cannot use (see Pilot).
func checkPilot(p *Pilot, dim int) error {
	switch {
	case p == nil:
		return errors.New("no pilot (nil) and no error")
	case len(p.Train) == 0:
		return errors.New("no training draws")
	case len(p.Eval) < 2:
		return fmt.Errorf("%d evaluation groups: need at least 2", len(p.Eval))
	}
	check := func(what string, draws [][]float64) error {
		for i, x := range draws {
			switch {
			case len(x) != dim:
				return fmt.Errorf("%s draw %d has length %d, the model has dimension %d", what, i, len(x), dim)
			case !allFinite(x):
				return fmt.Errorf("%s draw %d is not finite", what, i)
			}
		}
		return nil
	}
	if err := check("training", p.Train); err != nil {
		return err
	}
	for g, grp := range p.Eval {
		if len(grp) == 0 {
			return fmt.Errorf("evaluation group %d is empty", g)
		}
		if err := check(fmt.Sprintf("evaluation group %d's", g), grp); err != nil {
			return err
		}
	}
	return nil
}

// valueOf returns the value a non-nil pointer points to, and the zero value
// for a nil pointer, when that value is a T too (a method whose methods
// have value receivers): a pointer to a setting is its value, for the
// fingerprint, the defaults and the checks. Any other v is returned as it
// is.
func valueOf[T any](v T) T {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Pointer || !rv.Type().Elem().Implements(reflect.TypeFor[T]()) {
		return v
	}
	if rv.IsNil() {
		return reflect.Zero(rv.Type().Elem()).Interface().(T)
	}
	return rv.Elem().Interface().(T)
}

// defaulter is a setting of this package whose zero fields take the
// defaults documented on them: Run hashes, checks and uses the value with
// them filled in.
type defaulter[T any] interface {
	withDefaults() T
}

// withDefaults returns v with its defaults filled in, def for nil.
func withDefaults[T any](v, def T) T {
	if reflect.ValueOf(v).IsValid() {
		v = valueOf(v)
	} else {
		v = def
	}
	if d, ok := any(v).(defaulter[T]); ok {
		return d.withDefaults()
	}
	return v
}

// checkSetting calls v's CheckSpace, if it has one.
func checkSetting(v any, space *ppl.Space) error {
	if c, ok := v.(SpaceChecker); ok {
		return c.CheckSpace(space)
	}
	return nil
}

// adaptWithin runs a short NUTS warm-up from the pilot's draws for a model
// whose pilot did not adapt a NUTS kernel (SMC or given draws).
func adaptWithin(ctx context.Context, seed uint64, m ppl.Model, k int, p *pilot) error {
	if p.Metric != nil {
		return nil
	}
	start := p.Train[len(p.Train)/2]
	res, err := kernels.Sample(ctx, func(int) (kernels.Target, error) { return m.Clone(), nil }, &kernels.SampleSettings{Init: func(_ int, _ *rand.Rand, x []float64) error { copy(x, start); return nil }, Chains: 1, Warmup: 300, Draws: 1, Seed: runs.SubSeed(seed, "within", k)})
	if err != nil {
		return fmt.Errorf("adapting the within-model NUTS kernel: %w", err)
	}
	p.StepSize, p.Metric = res.Chains[0].StepSize, res.Chains[0].Metric
	return nil
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return false
		}
	}
	return true
}

// logMeanExp returns log((1/n) Σ exp(x_i)) and the delta-method standard
// error of that log-mean from the spread of exp(x_i) across independent
// estimates.
func logMeanExp(x []float64) (float64, float64, error) {
	if len(x) < 2 {
		return 0, 0, errors.New("need two or more estimates")
	}
	top := floats.Max(x)
	w := make([]float64, len(x))
	for i, v := range x {
		w[i] = math.Exp(v - top)
	}
	mean := floats.Sum(w) / float64(len(w))
	var ss float64
	for _, v := range w {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(len(w)-1))
	return top + math.Log(mean), sd / math.Sqrt(float64(len(w))) / mean, nil
}
