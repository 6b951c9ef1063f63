package selection

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Exact (the default Proposal on a space that gives neighbourhood
// scorers, such as glmselect.Gaussian's under a fixed-g g-prior, with a
// model prior of sizes, ppl.SizePrior) takes each model's exact posterior
// as its transport. A transport jump's acceptance ratio is then the ratio
// of the two models' posterior probabilities whatever the parameters, so
// the chains move on the models alone (kernels.CollapsedKernel: every add,
// drop and swap of a model scored at once from kept statistics, the next
// proposed by locally balanced weights) and draw each kept step's
// parameters from its model's exact posterior. No model is built: a step
// costs O(k²P) for a model of k terms, whatever the number of models.
type Exact struct {
	// SwapProb is the probability of a swap rather than an add or drop
	// (default 0.9, negative: none); Uniform proposes neighbours uniformly
	// (MC3) instead of by their evidences; Balancing is the add/drop
	// weights' balancing function (kernels.CollapsedSettings).
	SwapProb  float64
	Uniform   bool
	Balancing kernels.Balancing
}

func (Exact) String() string { return "exact" }

// Prepare checks that the space can be sampled on its models alone; Run
// then runs the collapsed chains itself, and the Proposer it returns
// builds no transports.
func (Exact) Prepare(_ context.Context, in *Preparation) (Proposer, error) {
	if err := exactReady(in.Space); err != nil {
		return nil, err
	}
	return exactProposer{}, nil
}

// exactReady reports why sp cannot be sampled on its models alone.
func exactReady(sp *ppl.SelectionSpace) error {
	if !sp.HasScorer() {
		return errors.New("the space gives no neighbourhood scorers (ppl.WithNeighbourhoodScorer); use another family")
	}
	if _, ok := sp.Prior().(ppl.SizePrior); !ok {
		return fmt.Errorf("the model prior %v depends on more than a model's size (ppl.SizePrior); use another family", sp.Prior())
	}
	return nil
}

type exactProposer struct{}

func (exactProposer) Laplace() bool { return false }

func (exactProposer) Model(ppl.Terms, *ppl.GraphModel, *flows.Laplace) (kernels.Transport, kernels.Transport, error) {
	return nil, nil, errors.New("selection: the exact family moves on the models alone and builds no transports")
}

// exactRBEvery is the stride of the steps at which an exact chain renews
// its Rao-Blackwellised inclusion probabilities: each renewal costs P
// evaluations and exponentials when the model has moved, as much as a
// step, and the conditional probabilities of neighbouring steps are
// strongly correlated.
const exactRBEvery = 4

// exactTarget is a space as kernels.CollapsedTarget sees it.
type exactTarget struct {
	sp    *ppl.SelectionSpace
	prior ppl.SizePrior
}

func (t exactTarget) NumTerms() int              { return t.sp.P() }
func (t exactTarget) LogSizePrior(k int) float64 { return t.prior.LogSizePrior(t.sp.P(), k) }
func (t exactTarget) NewScorer() (kernels.SelectionScorer, error) {
	return t.sp.NewScorer()
}

// runExactChains runs the chains of an Exact run in parallel.
func runExactChains(ctx context.Context, sp *ppl.SelectionSpace, s *Settings, chains []int, fp string, start time.Time) ([]*selChain, error) {
	if err := exactReady(sp); err != nil {
		return nil, fmt.Errorf("selection: %w", err)
	}
	done := make([]*selChain, len(chains))
	var progMu sync.Mutex
	err := parallel.For(ctx, len(chains), func(ctx context.Context, i int) error {
		r, err := runExactChain(ctx, sp, s, chains[i], fp, start, &progMu)
		done[i] = r
		return err
	})
	return done, err
}

// runExactChain is runSelectChain for the collapsed kernel.
func runExactChain(ctx context.Context, sp *ppl.SelectionSpace, s *Settings, chain int, fp string, t0 time.Time, progMu *sync.Mutex) (_ *selChain, err error) {
	rng := runs.Stream(s.Seed, "select", chain)
	ex, _ := s.Proposal.(Exact)
	k, err := kernels.NewCollapsedKernel(exactTarget{sp: sp, prior: sp.Prior().(ppl.SizePrior)},
		&kernels.CollapsedSettings{SwapProb: ex.SwapProb, Uniform: ex.Uniform, Balancing: ex.Balancing})
	if err != nil {
		return nil, err
	}
	var active []int
	if s.Start != nil {
		active = s.Start.Indices()
	}
	st, err := k.Init(active)
	if err != nil {
		return nil, fmt.Errorf("selection: chain %d: %w", chain, err)
	}
	l, err := newChainLog(sp, s, chain, fp)
	if err != nil {
		return l.out, err
	}
	if rb := l.out.answer.rb; rb != nil {
		// The kernel has every flip neighbour's evidence already.
		rb.source = func(dst []float64) { k.Conditionals(st, dst) }
		rb.every = exactRBEvery
	}
	view := &kernels.SelectionState{}
	A, S := sp.Always(), sp.Shared()
	var key []byte
	err = l.run(ctx, t0, progMu, func() (kernels.SelectionInfo, error) { return k.Step(rng, st) }, func(info kernels.SelectionInfo) error {
		key = key[:0]
		for _, a := range st.Active {
			key = strconv.AppendInt(append(key, ','), int64(a), 10)
		}
		id, ok := l.index[string(key)] // no allocation to look up
		if !ok {
			t, err := ppl.NewTerms(sp.P(), st.Active...)
			if err != nil {
				return err
			}
			id = l.addModel(string(key), t, st.LogEvidence)
		}
		view.Active, view.LogDensity, view.LogPrior = st.Active, st.LogEvidence, st.LogPrior
		view.Theta = grow(view.Theta, A+len(st.Active)+S)
		if err := k.Draw(rng, view.Theta); err != nil {
			return fmt.Errorf("selection: chain %d: %w", chain, err)
		}
		return l.keep(info, id, view)
	})
	return l.out, l.close(err)
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}
