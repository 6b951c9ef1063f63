package selection

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// chainLog is what both selection kernels' chains keep of their kept
// steps: the models met (numbered in order of first visit, with their
// keys), the moves, the answers' sums, the recorder and the draws file.
type chainLog struct {
	s     *Settings
	out   *selChain
	index map[string]int32
	keys  []string
	csv   *selectCSV
}

// newChainLog starts chain's log, its draws file in s.DrawsDir if set.
func newChainLog(sp *ppl.SelectionSpace, s *Settings, chain int, fp string) (*chainLog, error) {
	l := &chainLog{s: s, index: map[string]int32{},
		out: &selChain{chain: chain, ids: make([]int32, 0, s.Steps), answer: newAnswerAcc(sp, s)}}
	if s.DrawsDir != "" {
		var err error
		if l.csv, err = newSelectCSV(s.DrawsDir, sp, s, chain, fp); err != nil {
			return l, err
		}
	}
	return l, nil
}

// close closes the draws file, marking it interrupted when err is not
// nil (the interrupt rule), and returns err or the close's error.
func (l *chainLog) close(err error) error {
	if l.csv == nil {
		return err
	}
	if cerr := runs.CloseDraws(l.csv.w, err, l.csv.close); err == nil {
		err = cerr
	}
	return err
}

// run makes the chain's Warmup + Steps steps, keeping each step after the
// warm-up: step moves the chain, kept records the step just made.
func (l *chainLog) run(ctx context.Context, t0 time.Time, progMu *sync.Mutex, step func() (kernels.SelectionInfo, error), kept func(kernels.SelectionInfo) error) error {
	s, out := l.s, l.out
	total := s.Warmup + s.Steps
	every := max(1, total/100)
	for i := range total {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		info, err := step()
		if err != nil {
			return fmt.Errorf("selection: chain %d step %d: %w", out.chain, i, err)
		}
		if i >= s.Warmup {
			out.moves[info.Move].proposed++
			if info.Accepted {
				out.moves[info.Move].accepted++
			}
			out.within.proposed += info.WithinProposed
			out.within.accepted += info.WithinAccepted
			if err := kept(info); err != nil {
				return err
			}
		}
		if s.Progress != nil && ((i+1)%every == 0 || i == total-1) {
			progMu.Lock()
			s.Progress(pipeline.Progress{Stage: "chains", Model: -1, Chain: out.chain, Done: i + 1, Total: total, Visited: len(out.models), Elapsed: time.Since(t0)})
			progMu.Unlock()
		}
	}
	return nil
}

// model returns the number of the model with key key, or false when the
// chain has not met it.
func (l *chainLog) model(key string) (int32, bool) {
	id, ok := l.index[key]
	return id, ok
}

// addModel numbers a model met for the first time.
func (l *chainLog) addModel(key string, t ppl.Terms, logZ float64) int32 {
	id := int32(len(l.out.models))
	l.index[key] = id
	l.keys = append(l.keys, key)
	l.out.models = append(l.out.models, t)
	l.out.evidence = append(l.out.evidence, logZ)
	return id
}

// keep records a kept step in model id at st (its terms and point) after
// the move info.
func (l *chainLog) keep(info kernels.SelectionInfo, id int32, st *kernels.SelectionState) error {
	out := l.out
	out.ids = append(out.ids, id)
	tm := out.models[id]
	if err := out.answer.add(tm, l.keys[id], st.Active, st.Theta); err != nil {
		return fmt.Errorf("selection: chain %d: %w", out.chain, err)
	}
	if l.s.record != nil {
		l.s.record(out.chain, st.Active, st.Theta)
	}
	if l.csv != nil {
		return l.csv.write(st, info, tm)
	}
	return nil
}
