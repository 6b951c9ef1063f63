package selection

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Run runs variable selection over the models of sp: chains of the
// transdimensional selection kernel (add, drop or swap one term, the
// parameters carried by each model's transport, by default the full
// model's Laplace Gaussian conditioned on the missing terms, then
// within-model moves), in parallel, each with its own random stream from Seed and its
// own cache of models built on first visit. It returns each term's
// posterior inclusion probability ± MCSE and R̂, the most visited models
// and the expected model size.
//
// When ctx is cancelled, Run follows the interrupt rule of both
// workflows: it returns, with ctx's error, the result of every finished
// kept step of every chain (the chains are not cut to the shortest),
// marked partial (Result.Complete false, Result.Stopped the reason), and
// each chain's file in DrawsDir is marked "# interrupted = reason" after
// its last row. It returns nil when no chain had kept a step.
//
// Settings.DrawsDir is refused, before any work, when it holds chain files
// (select-N.csv) of another run: each file carries its run's fingerprint
// (Result.Fingerprint), and a folder never mixes two runs' files; shards
// of one run may share it.
func Run(ctx context.Context, sp *ppl.SelectionSpace, settings *Settings) (*Result, error) {
	if sp == nil {
		return nil, errors.New("selection: Run: nil selection space")
	}
	s := settings.withDefaults()
	if settings == nil || settings.Proposal == nil {
		switch {
		case exactReady(sp) == nil:
			// Closed-form evidences and posteriors: the chains need no
			// transports at all.
			s.Proposal = Exact{}
		case sp.HasPosterior():
			// The space's closed-form posteriors are the best transports.
			s.Proposal = ModelPosterior{}
		case s.Informed && sp.HasEvidence():
			// The informed weights come from the space's exact evidences:
			// no Laplace fit per model is needed.
			s.Proposal = FullConditional{}
		}
	}
	if err := s.validate(sp); err != nil {
		return nil, err
	}
	chains := s.Shard
	if chains == nil {
		chains = make([]int, s.Chains)
		for i := range chains {
			chains[i] = i
		}
	}
	fp, described := fingerprint(sp, &s)
	if s.DrawsDir != "" {
		if err := runs.ClaimDir(s.DrawsDir, drawsFile, fp); err != nil {
			return nil, fmt.Errorf("selection: %w", err)
		}
	}
	start := time.Now()
	if _, ok := s.Proposal.(Exact); ok {
		done, err := runExactChains(ctx, sp, &s, chains, fp, start)
		return finish(ctx, sp, &s, chains, done, fp, described, 0, 0, start, err)
	}
	sh, err := newSelShared(ctx, sp.Clone(), &s)
	if err != nil {
		return nil, err
	}
	sh.fingerprint = fp
	done := make([]*selChain, len(chains))
	var progMu sync.Mutex
	err = parallel.For(ctx, len(chains), func(ctx context.Context, i int) error {
		r, err := runSelectChain(ctx, sh, &s, chains[i], start, &progMu)
		done[i] = r
		return err
	})
	if !sh.prop.Laplace() && !sp.HasEvidence() && ctx.Err() == nil {
		if err2 := sh.topEvidence(done, s.Top); err2 != nil && err == nil {
			err = err2
		}
	}
	return finish(ctx, sp, &s, chains, done, fp, described, sh.sp.Builds(), int(sh.flagged.Load()), start, err)
}

// finish makes the result of the chains done, partial when the run was
// interrupted (err from ctx).
func finish(ctx context.Context, sp *ppl.SelectionSpace, s *Settings, chains []int, done []*selChain, fp string, described map[string]string, built, flagged int, start time.Time, err error) (*Result, error) {
	res := newSelectResult(sp, s, chains, done)
	res.Fingerprint, res.Settings, res.NumChains = fp, described, s.Chains
	res.Built = built
	res.setFlagged(flagged)
	res.Seconds = time.Since(start).Seconds()
	if err != nil {
		if ctx.Err() != nil && res.Steps > 0 {
			res.Stopped = runs.Reason(ctx.Err())
			return res, ctx.Err()
		}
		return nil, err
	}
	res.Complete = true
	return res, nil
}

// selChain is what one chain leaves: the model of every kept step (as an
// index into models) and its counters.
type selChain struct {
	chain    int
	models   []ppl.Terms
	ids      []int32
	evidence []float64 // Laplace log evidence of each model in models
	answer   *answerAcc
	moves    [4]struct{ proposed, accepted int }
	within   struct{ proposed, accepted int }
}

func runSelectChain(ctx context.Context, sh *selShared, s *Settings, chain int, t0 time.Time, progMu *sync.Mutex) (_ *selChain, err error) {
	sp := sh.sp
	rng := runs.Stream(s.Seed, "select", chain)
	tg := newSelTarget(sh)
	ks := kernels.SelectionSettings{}
	if s.Kernel != nil {
		ks = *s.Kernel
	}
	ks.Informed = s.Informed
	var target kernels.SelectionTarget = tg
	if sp.HasEvidence() {
		target = &evidenceTarget{selTarget: tg, logZ: map[string]float64{}}
	}
	k, err := kernels.NewSelectionKernel(target, &ks)
	if err != nil {
		return nil, err
	}
	var active []int
	if s.Start != nil {
		active = s.Start.Indices()
	}
	st, err := k.Init(active, nil)
	if err != nil {
		return nil, err
	}
	l, err := newChainLog(sp, s, chain, sh.fingerprint)
	if err != nil {
		return l.out, err
	}
	err = l.run(ctx, t0, progMu, func() (kernels.SelectionInfo, error) { return k.Step(rng, st) }, func(info kernels.SelectionInfo) error {
		e := st.Model.(*selEntry)
		id, ok := l.model(e.key)
		if !ok {
			id = l.addModel(e.key, e.terms, e.LogEvidence())
		}
		return l.keep(info, id, st)
	})
	return l.out, l.close(err)
}

// topEvidence gives the most visited models (the s.Top first, and any
// tied with the last) their Laplace evidence after the chains have run,
// for families that fit none per model: the result's evidence column and
// renormalised estimates then cost Top fits.
func (t *selShared) topEvidence(runs []*selChain, top int) error {
	counts := map[string]int{}
	terms := map[string]ppl.Terms{}
	for _, c := range runs {
		if c == nil {
			continue
		}
		for _, id := range c.ids {
			k := c.models[id].Key()
			if counts[k] == 0 {
				terms[k] = c.models[id]
			}
			counts[k]++
		}
	}
	cs := make([]int, 0, len(counts))
	for _, n := range counts {
		cs = append(cs, n)
	}
	slices.Sort(cs)
	if len(cs) == 0 {
		return nil
	}
	least := cs[max(0, len(cs)-top)]
	keys := make([]string, 0, top)
	for k, n := range counts {
		if n >= least {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys) // fit in a fixed order
	ev := map[string]float64{}
	for _, k := range keys {
		_, lap, err := t.laplace(terms[k])
		if err != nil {
			return err
		}
		ev[k] = lap.LogEvidence
	}
	for _, c := range runs {
		if c == nil {
			continue
		}
		for id, tm := range c.models {
			if v, ok := ev[tm.Key()]; ok {
				c.evidence[id] = v
			}
		}
	}
	return nil
}
