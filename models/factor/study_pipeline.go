package factor

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/ppl"
)

// The study's pipeline (RunPair): one SMC pilot per model and set, the
// proposal types fitted to its training set, bridge replicates on its
// evaluation set. Run goes through trj.Run instead.

// Pilot holds SMC draws (unconstrained) of each model: Train[k] and
// Eval[k] are independent runs.
type Pilot struct {
	Train, Eval [][][]float64
	// LogZ[set][k] is the SMC evidence estimate of model k's run (set 0
	// training, 1 evaluation).
	LogZ [2][]float64
	// ModeWeight[set] is the fraction of the 2-factor draws in the mode
	// with positive factor-2 loadings of variables 3..6.
	ModeWeight [2]float64
}

// RunPilot draws the training and evaluation sets by SMC from the prior,
// one run per model and set, each with n particles.
func RunPilot(ctx context.Context, y *mat.Dense, n int, smc kernels.SMCSettings, rejuvenate int, seed uint64, bar *experiment.Bar) (*Pilot, error) {
	pl := &Pilot{Train: make([][][]float64, len(factors)), Eval: make([][][]float64, len(factors))}
	_, p := y.Dims()
	for set, name := range []string{"pilot-train", "pilot-eval"} {
		pl.LogZ[set] = make([]float64, len(factors))
		for k, nf := range factors {
			f, err := TemperedFactory(y, nf)
			if err != nil {
				return nil, err
			}
			s := smc
			s.Particles = n
			s.Seed = experiment.Stream(seed, name, k).Uint64()
			r, err := kernels.RunSMC(ctx, f, &s)
			if err != nil {
				return nil, fmt.Errorf("factor: SMC pilot of the %d-factor model: %w", nf, err)
			}
			draws := make([][]float64, n)
			for i := range draws {
				draws[i] = append([]float64(nil), r.Particle(i)...)
			}
			if rejuvenate > 0 {
				if err := Rejuvenate(ctx, y, nf, draws, rejuvenate, seed, name); err != nil {
					return nil, err
				}
			}
			if set == 0 {
				pl.Train[k] = draws
			} else {
				pl.Eval[k] = draws
			}
			pl.LogZ[set][k] = r.LogZ
			if nf == 2 {
				lay := NewLayout(p, nf)
				pos := 0
				for _, d := range draws {
					if lay.Mode(d) > 0 {
						pos++
					}
				}
				pl.ModeWeight[set] = float64(pos) / float64(n)
			}
			bar.Add(1)
		}
	}
	return pl, nil
}

// Rejuvenate moves each draw of the k-factor posterior in place by steps
// random-walk Metropolis steps with proposal covariance 2.38²/n times the
// draws' covariance; draw i uses the stream experiment.Stream(seed,
// stage+"-rejuvenate", i), so the result does not depend on scheduling.
func Rejuvenate(ctx context.Context, y *mat.Dense, k int, draws [][]float64, steps int, seed uint64, stage string) error {
	if len(draws) < 2 {
		return fmt.Errorf("factor: %d draws to rejuvenate", len(draws))
	}
	m, err := NewModel(y, k)
	if err != nil {
		return err
	}
	covs, err := kernels.RandomWalkCovariances([][][]float64{draws}, 1)
	if err != nil {
		return err
	}
	cov := covs[0]
	n := len(draws[0])
	workers := runtime.GOMAXPROCS(0)
	return experiment.Parallel(ctx, workers, func(ctx context.Context, w int) error {
		rw, err := kernels.NewRWM(m.Clone(), 2.38/math.Sqrt(float64(n)), cov)
		if err != nil {
			return err
		}
		for i := w; i < len(draws); i += workers {
			if i%64 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			rng := experiment.Stream(seed, stage+"-rejuvenate", i)
			s, err := rw.Init(draws[i])
			if err != nil {
				continue // a particle outside the support stays put
			}
			for range steps {
				s, _ = rw.Step(rng, s)
			}
			copy(draws[i], s.Position)
		}
		return nil
	})
}

// ProposalSet is one proposal type fitted to the training draws. New
// returns a kernel for one goroutine.
type ProposalSet struct {
	Kind    string
	Reports []*flows.TrainReport
	affine  []*flows.Affine
	rqma    []*flows.RQMA
	train   [][][]float64
	lays    []Layout
}

// FitProposals fits the proposal type kind to the training draws.
func FitProposals(ctx context.Context, kind string, train [][][]float64, p int, cfg Config, bar *experiment.Bar) (*ProposalSet, error) {
	s := &ProposalSet{Kind: kind, train: train}
	for _, nf := range factors {
		s.lays = append(s.lays, NewLayout(p, nf))
	}
	switch kind {
	case experiment.ProposalAffine:
		for k, d := range train {
			a, err := flows.FitAffine(d, nil)
			if err != nil {
				return nil, fmt.Errorf("factor: affine flow of the %d-factor model: %w", factors[k], err)
			}
			s.affine = append(s.affine, a)
		}
	case experiment.ProposalRQMA:
		s.rqma = make([]*flows.RQMA, len(train))
		s.Reports = make([]*flows.TrainReport, len(train))
		err := experiment.Parallel(ctx, len(train), func(ctx context.Context, k int) error {
			o := cfg.Train
			o.Seed = experiment.Stream(cfg.Seed, "rqma-train", k).Uint64()
			o.Progress = func(flows.Progress) { bar.Add(1) }
			f, rep, err := flows.FitRQMA(ctx, train[k], cfg.RQMA, o)
			if err != nil {
				return fmt.Errorf("factor: RQMA flow of the %d-factor model: %w", factors[k], err)
			}
			s.rqma[k], s.Reports[k] = f, rep
			return ctx.Err()
		})
		if err != nil {
			return nil, err
		}
	case experiment.ProposalLopesWest:
		// Fitted per kernel in New (the proposal keeps scratch space);
		// fit once here to fail early.
		for k, d := range train {
			if _, err := newLopesWest(d, s.lays[k]); err != nil {
				return nil, fmt.Errorf("factor: Lopes–West proposal of the %d-factor model: %w", factors[k], err)
			}
		}
	default:
		return nil, fmt.Errorf("factor: unknown proposal type %q", kind)
	}
	return s, nil
}

// rjKernel is what the chains and the bridge need of TRJ and
// IndependenceRJ.
type rjKernel interface {
	kernels.JumpProposer
	Init(k int, theta []float64) (kernels.RJState, error)
	Step(rng *rand.Rand, s kernels.RJState) (kernels.RJState, kernels.RJInfo)
}

// New returns a kernel of this proposal type on target (which it then
// owns) with the given within-model kernel (nil: none).
func (s *ProposalSet) New(target *ppl.Space, within kernels.WithinModelKernel) (rjKernel, error) {
	jump := kernels.UniformJumps(target.NumModels())
	switch s.Kind {
	case experiment.ProposalAffine, experiment.ProposalRQMA:
		tr := s.Transports()
		perm := [][][]int{{nil, Alignment(s.lays[0], s.lays[1])}, {nil, nil}}
		return kernels.NewTRJ(kernels.TRJConfig{Target: target, Transports: tr, Jump: jump, Within: within, Alternate: within != nil, Permutations: perm})
	case experiment.ProposalLopesWest:
		var props []kernels.IndependenceProposal
		for k, d := range s.train {
			q, err := newLopesWest(d, s.lays[k])
			if err != nil {
				return nil, err
			}
			props = append(props, q)
		}
		return kernels.NewIndependenceRJ(kernels.IndependenceRJConfig{Target: target, Proposals: props, Jump: jump, Within: within, Alternate: within != nil})
	}
	return nil, fmt.Errorf("factor: unknown proposal type %q", s.Kind)
}

// Transports returns the per-model transports of a TRJ proposal type for
// one goroutine (nil for Lopes–West).
func (s *ProposalSet) Transports() []kernels.Transport {
	var out []kernels.Transport
	for _, a := range s.affine {
		out = append(out, a.Clone())
	}
	for _, f := range s.rqma {
		out = append(out, f.Clone())
	}
	return out
}
