package trj

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Run compares the models of space: it draws pilot samples of every model,
// fits a transport to each, estimates the model probabilities with the
// bridge estimator, and runs transport reversible-jump chains whose visit
// frequencies estimate them again, with Monte Carlo standard errors.
// settings may be nil for the defaults.
//
// Stages that run per model (pilots, transports) or per chain run in
// parallel. Cancelling ctx stops the run: the result holds the stages that
// finished (Result.Complete is false) and the error is ctx's.
func Run(ctx context.Context, space *ppl.Space, settings *Settings) (*Result, error) {
	if space == nil {
		return nil, errors.New("trj: nil space")
	}
	K := space.NumModels()
	if K < 2 {
		return nil, fmt.Errorf("trj: the space has %d model(s): comparing needs at least 2", K)
	}
	s := settings.withDefaults(K)
	if err := s.validate(K); err != nil {
		return nil, err
	}
	for k := range K {
		m, err := space.Model(k)
		if err != nil {
			return nil, err
		}
		if m.Dim() != space.ModelDim(k) {
			return nil, fmt.Errorf("trj: model %q has dimension %d, the space says %d", space.ModelLabel(k), m.Dim(), space.ModelDim(k))
		}
	}
	var out *output
	if s.OutputDir != "" {
		var err error
		if out, err = newOutput(s.OutputDir); err != nil {
			return nil, err
		}
	}
	res := newResult(space, &s)
	res.Fingerprint = fingerprint(space, &s)
	finish := func(err error) (*Result, error) {
		if out != nil {
			if werr := out.finish(res); werr != nil && err == nil {
				err = werr
			}
		}
		return res, err
	}
	progress := func(stage string, model, chain int) func(done, total int) {
		if s.Progress == nil {
			return nil
		}
		return func(done, total int) {
			s.Progress(Progress{Stage: stage, Model: model, Chain: chain, Done: done, Total: total})
		}
	}

	// Pilots, one model per worker.
	pilots := make([]*pilot, K)
	err := res.time("pilot", func() error {
		return parallel.For(ctx, K, func(ctx context.Context, k int) error {
			p, err := runPilot(ctx, &s, space, k, progress("pilot", k, -1))
			if err == nil && s.Pilot.From == nil && s.Pilot.Method != PilotNUTS && s.needsNUTS() {
				m, _ := space.Model(k)
				if err = adaptWithin(ctx, &s, m, k, p); err == nil && s.Pilot.Method == PilotSMC {
					err = refresh(ctx, &s, m, k, p)
				}
			}
			if err != nil {
				return fmt.Errorf("trj: pilot of model %q: %w", space.ModelLabel(k), err)
			}
			pilots[k] = p
			return nil
		})
	})
	if err != nil {
		return finish(err)
	}
	res.Pilots = pilots
	res.setEvidence(pilots)

	// Transports.
	ts := make([]kernels.Transport, K)
	var cond kernels.ConditionalTransport
	var indep *independenceSet
	err = res.time("transport", func() error {
		if s.Transport.Load != nil {
			var c *flows.ConditionalRQMA
			var err error
			if ts, c, err = loadTransports(s.Transport.Load, space); err != nil {
				return err
			}
			if c != nil {
				cond = c
				res.conditional = c
			}
			if (c != nil) != (s.Chains.Algorithm == CTRJ) {
				return errors.New("trj: a saved conditional transport goes with CTRJ, saved per-model transports with TRJ (Chains.Algorithm)")
			}
			for k := range K {
				res.Transports[k] = TransportReport{Kind: "loaded"}
			}
			res.transports = ts
			return nil
		}
		if s.Chains.Algorithm == CTRJ && s.Transport.Kind != TransportConditional {
			for k := range K {
				res.Transports[k] = TransportReport{Kind: "identity"}
			}
			return nil
		}
		if s.Transport.Kind == TransportConditional {
			f, err := fitConditional(ctx, &s, space, pilots)
			if err != nil {
				return fmt.Errorf("trj: conditional flow: %w", err)
			}
			cond = f
			res.conditional = f
			for k := range K {
				res.Transports[k] = TransportReport{Kind: "conditional RQMA"}
			}
			return nil
		}
		if s.Transport.Kind == TransportIndependence {
			var err error
			indep, err = fitIndependence(ctx, &s, space, pilots, res.Transports)
			return err
		}
		cache := flows.NewTrainCache() // dropped with the stage
		return parallel.For(ctx, K, func(ctx context.Context, k int) error {
			t, rep, err := fitTransport(ctx, &s, space, k, pilots[k], cache)
			if err != nil {
				return fmt.Errorf("trj: transport of model %q: %w", space.ModelLabel(k), err)
			}
			ts[k], res.Transports[k] = t, rep
			return nil
		})
	})
	if err != nil {
		return finish(err)
	}
	if res.conditional == nil && ts[0] != nil {
		res.transports = ts
	}
	kb := &kernelBuilder{space: space, ts: ts, cond: cond, alg: s.Chains.Algorithm, perm: s.Chains.Permutations, aux: s.Chains.Aux, indep: indep}
	// The bridge's groups and the chains each need their own copy.
	for k, t := range ts {
		if t != nil && reflectClone(t) == nil {
			return finish(fmt.Errorf("trj: transport %d (%T) has no Clone method, so it cannot serve the bridge's and the chains' goroutines: add one", k, t))
		}
	}

	// Bridge estimate from the evaluation draws.
	err = res.time("bridge", func() error {
		jump := kernels.UniformJumps(K)
		b, err := bridgeEstimate(ctx, s.Seed, pilots, nil, s.Bridge.Proposals, func(int) (kernels.RJKernel, error) {
			return kb.kernel(jump, nil)
		})
		if err != nil {
			return fmt.Errorf("trj: bridge estimate: %w", err)
		}
		res.Bridge = b
		return nil
	})
	// A failed estimate (too few accepted proposals, say) does not stop
	// the run: the chains need no estimate, only jump probabilities.
	probs := make([]float64, K)
	for k := range probs {
		probs[k] = 1 / float64(K)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return finish(err)
	case err != nil:
		res.BridgeError = err.Error()
	default:
		probs = res.Bridge.Normalized
	}

	// Chains, each a jump proposal with j_k ∝ π̂ then a NUTS move.
	err = res.time("chains", func() error {
		for k := range K {
			if s.Chains.Within != WithinNUTS {
				break // the random walk needs no adaptation
			}
			m, _ := space.Model(k)
			if err := adaptWithin(ctx, &s, m, k, pilots[k]); err != nil {
				return fmt.Errorf("trj: model %q: %w", space.ModelLabel(k), err)
			}
		}
		jump, err := s.chainJumps(probs)
		if err != nil {
			return err
		}
		newWithin, err := s.withinFactory(space, pilots)
		if err != nil {
			return err
		}
		res.Jump = jump
		start := s.Chains.Start
		if start == nil {
			start = defaultStart(probs, pilots)
		}
		var w *drawWriter
		if out != nil {
			if w, err = out.drawWriter(space, &s); err != nil {
				return err
			}
		}
		rj, err := runChains(ctx, &s, w, start, func(int) (kernels.RJKernel, error) {
			within, err := newWithin()
			if err != nil {
				return nil, err
			}
			return kb.chainKernel(jump, within, s.Chains.FlowMoves)
		})
		if rj != nil {
			res.setChains(rj)
		}
		if w != nil {
			if cerr := w.close(err); err == nil {
				err = cerr
			}
		}
		return err
	})
	if err != nil {
		return finish(err)
	}
	res.Complete = true
	return finish(nil)
}

// kernelBuilder makes a fresh kernel, with its own clones of the space and
// transports, for every goroutine that needs one.
type kernelBuilder struct {
	space *ppl.Space
	ts    []kernels.Transport
	cond  kernels.ConditionalTransport
	alg   Algorithm
	perm  [][][]int
	aux   kernels.AuxiliaryDensity
	indep *independenceSet
}

func (b *kernelBuilder) kernel(jump [][]float64, within kernels.WithinModelKernel) (kernels.RJKernel, error) {
	return b.chainKernel(jump, within, 0)
}

// chainKernel is kernel with flowMoves independence moves after each
// within-model move: proposals from each model's transport for TRJ, from
// the conditional transport for CTRJ (none for CTRJ without one: the
// identity is no proposal), from q_k with independence proposals. The
// moves share the kernel's clones of the space and transports.
func (b *kernelBuilder) chainKernel(jump [][]float64, within kernels.WithinModelKernel, flowMoves int) (kernels.RJKernel, error) {
	space := b.space.Clone()
	if b.indep != nil {
		props, err := b.indep.proposals()
		if err != nil {
			return nil, err
		}
		if flowMoves > 0 {
			within = &proposalMoves{base: within, target: space, props: props, n: flowMoves}
		}
		return kernels.NewIndependenceRJ(kernels.IndependenceRJConfig{Target: space, Proposals: props, Jump: jump, Within: within, Alternate: true})
	}
	if b.alg == CTRJ {
		var cond kernels.ConditionalTransport
		if b.cond != nil {
			c, ok := reflectClone(b.cond).(kernels.ConditionalTransport)
			if !ok {
				return nil, errors.New("trj: the conditional transport cannot be cloned")
			}
			cond = c
			if flowMoves > 0 {
				within = newCondFlowMoves(within, space, cond, b.aux, flowMoves)
			}
		}
		return kernels.NewCTRJ(kernels.CTRJConfig{
			Target: space, Transport: cond, Active: space.ActiveMasks(), Jump: jump, Within: within, Alternate: true, Aux: b.aux,
		})
	}
	ts, err := b.transports()
	if err != nil {
		return nil, err
	}
	if flowMoves > 0 {
		within = newFlowMoves(within, space, ts, flowMoves)
	}
	return kernels.NewTRJ(kernels.TRJConfig{Target: space, Transports: ts, Jump: jump, Within: within, Alternate: true, Permutations: b.perm})
}

// transports returns clones of the per-model transports.
func (b *kernelBuilder) transports() ([]kernels.Transport, error) {
	ts := make([]kernels.Transport, len(b.ts))
	for k, t := range b.ts {
		c, ok := reflectClone(t).(kernels.Transport)
		if !ok {
			return nil, fmt.Errorf("trj: transport %d (%T): its Clone does not give a kernels.Transport", k, t)
		}
		ts[k] = c
	}
	return ts, nil
}

// reflectClone calls v's Clone method, whatever concrete type it returns;
// nil when there is none.
func reflectClone(v any) any {
	m := reflect.ValueOf(v).MethodByName("Clone")
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 {
		return nil
	}
	return m.Call(nil)[0].Interface()
}

// withinKernel is one NUTS kernel per model with the pilot's adaptation,
// over the chain's own model clones.
func withinKernel(space *ppl.Space, pilots []*pilot) (kernels.WithinModelKernel, error) {
	nuts := make([]*kernels.NUTS, len(pilots))
	for k, p := range pilots {
		m, err := space.Model(k)
		if err != nil {
			return nil, err
		}
		if nuts[k], err = kernels.NewNUTS(m.Clone(), p.StepSize, p.Metric); err != nil {
			return nil, err
		}
	}
	return kernels.NewNUTSWithin(nuts)
}

// defaultStart draws chain c's model from the bridge estimate and θ from
// that model's evaluation draws.
func defaultStart(probs []float64, pilots []*pilot) func(int, *rand.Rand) (int, []float64, error) {
	return func(_ int, rng *rand.Rand) (int, []float64, error) {
		u := rng.Float64()
		k := len(probs) - 1
		for i, p := range probs {
			if u < p {
				k = i
				break
			}
			u -= p
		}
		ev := pilots[k].EvalDraws()
		return k, ev[rng.IntN(len(ev))], nil
	}
}

// subSeed derives the seed of one stage's part i from the run's seed.
func subSeed(seed uint64, stage string, i int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(stage))
	x := seed ^ h.Sum64() ^ (uint64(i)+1)*0x9e3779b97f4a7c15
	// splitmix64 finaliser: nearby inputs give unrelated seeds.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// stream is the random stream of one stage's part i.
func stream(seed uint64, stage string, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, subSeed(seed, stage, i)))
}

// checkDir makes dir and checks that a file can be written in it.
func checkDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("trj: output folder: %w", err)
	}
	f, err := os.CreateTemp(dir, ".trj-check-*")
	if err != nil {
		return fmt.Errorf("trj: output folder %s is not writable: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(filepath.Clean(name))
}

// timed runs f and records its wall time under stage.
func (r *Result) time(stage string, f func() error) error {
	t0 := time.Now()
	err := f()
	r.Timings = append(r.Timings, StageTime{Stage: stage, Seconds: time.Since(t0).Seconds()})
	return err
}
