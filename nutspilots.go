package trj

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// NUTSPilots draws each model's pilot with NUTS chains and Stan's warm-up.
type NUTSPilots struct {
	// Chains is the number of chains per model (8); the first half
	// train the transports, the second half evaluate them. A NUTS chain
	// rarely leaves the mode it warms up in, so the chains are what spreads
	// the pilot over a multimodal posterior's modes: on the factor-analysis
	// space (sign modes of the loadings), π(2 factors) over three seeds
	// spread by 0.002 (standard deviation) with 8 chains of 500 draws and
	// by 0.013 with 4 chains of 1000, the reported standard error about
	// 0.009 in both (bench/README.md, "Factor analysis: trj.Run defaults").
	Chains int
	// Warmup and Draws are the warm-up and kept iterations per chain
	// (1000 and 500).
	Warmup, Draws int
}

// Name returns "NUTS".
func (NUTSPilots) Name() string { return "NUTS" }

func (p NUTSPilots) withDefaults() PilotMethod { return p.defaults() }

func (p NUTSPilots) defaults() NUTSPilots {
	runs.OrDefault(&p.Chains, 8)
	runs.OrDefault(&p.Warmup, 1000)
	runs.OrDefault(&p.Draws, 500)
	return p
}

// CheckSpace refuses chain counts that cannot be split in halves, and
// pilots whose iterations overflow or whose draws cannot fit in memory.
func (p NUTSPilots) CheckSpace(space *ppl.Space) error {
	p = p.defaults()
	switch {
	case p.Chains < 2 || p.Chains%2 != 0:
		return fmt.Errorf("%d pilot chains (NUTSPilots.Chains): need an even number ≥ 2 (half train, half evaluate)", p.Chains)
	case p.Draws < 2 || p.Warmup < 0:
		return fmt.Errorf("pilot of %d warm-up and %d draws per chain (NUTSPilots.Warmup, Draws): need warm-up ≥ 0 and at least 2 draws", p.Warmup, p.Draws)
	case p.Warmup > math.MaxInt-p.Draws:
		return fmt.Errorf("NUTSPilots.Warmup %d + Draws %d overflow an int", p.Warmup, p.Draws)
	case p.Chains > runs.MaxChains:
		return fmt.Errorf("NUTSPilots.Chains = %d: at most %d chains per model", p.Chains, runs.MaxChains)
	}
	// Every model's pilot is kept: K·Chains chains of Draws draws, of the
	// models' mean dimension (rounded up).
	K := space.NumModels()
	dims := 0
	for k := range K {
		dims += space.ModelDim(k)
	}
	set := kernels.SampleSettings{Chains: K * p.Chains, Warmup: p.Warmup, Draws: p.Draws}
	if err := set.CheckMemory((dims + K - 1) / K); err != nil {
		return fmt.Errorf("the pilots (%d models × NUTSPilots.Chains %d × Draws %d): %w", K, p.Chains, p.Draws, err)
	}
	return nil
}

// Pilot runs the model's chains: the first half's draws train, and each
// chain of the second half gives Groups/(Chains/2) evaluation groups of
// consecutive draws (Groups 20 when zero).
func (ps NUTSPilots) Pilot(ctx context.Context, job *PilotJob) (*Pilot, error) {
	ps = ps.defaults()
	m, progress := job.Model, job.Progress
	total := ps.Chains * (ps.Warmup + ps.Draws)
	done := 0
	res, err := kernels.Sample(ctx, func(int) (kernels.Target, error) { return m.Clone(), nil }, &kernels.SampleSettings{Init: func(_ int, rng *rand.Rand, x []float64) error { return m.Init(rng, x) },
		Chains: ps.Chains, Warmup: ps.Warmup, Draws: ps.Draws, Seed: runs.SubSeed(job.Seed, "pilot", job.K),
		Progress: func(p kernels.Progress) {
			if progress != nil && p.Chain == 0 && p.Done%100 == 0 {
				done = p.Done * ps.Chains
				progress(done, total)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	groups := job.Groups
	if groups == 0 {
		groups = 20
	}
	half := ps.Chains / 2
	perChain := max(groups/half, 1)
	if ps.Draws < perChain {
		return nil, fmt.Errorf("%d draws per chain cannot make %d bridge groups per evaluation chain", ps.Draws, perChain)
	}
	p := &pilot{StepSize: res.Chains[0].StepSize, Metric: res.Chains[0].Metric, EvalChains: ps.Chains - half}
	for c := range res.Chains {
		ch := &res.Chains[c]
		n := len(ch.Info)
		if c < half {
			for i := range n {
				p.Train = append(p.Train, ch.Draw(i))
			}
			continue
		}
		// Consecutive batches of an evaluation chain: long enough that
		// batches are nearly independent for a mixing chain.
		for b := range perChain {
			lo, hi := b*n/perChain, (b+1)*n/perChain
			g := make([][]float64, 0, hi-lo)
			for i := lo; i < hi; i++ {
				g = append(g, ch.Draw(i))
			}
			p.Eval = append(p.Eval, g)
		}
	}
	return p, nil
}
