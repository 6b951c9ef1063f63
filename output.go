package trj

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/trjgo/trj/internal/figures"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/draws"
)

// output writes a run's files into one folder.
type output struct {
	dir         string
	fingerprint string
}

// drawsFile matches the names of the chain files of Settings.OutputDir,
// which the output-folder rule checks (runs.ClaimDir).
var drawsFile = regexp.MustCompile(`^draws_[0-9]+\.csv$`)

// newOutput claims dir for the run of fingerprint fp: it refuses a folder
// holding another run's chain files.
func newOutput(dir, fp string) (*output, error) {
	if err := runs.ClaimDir(dir, drawsFile, fp); err != nil {
		return nil, fmt.Errorf("trj: %w", err)
	}
	return &output{dir: dir, fingerprint: fp}, nil
}

// finish writes the JSON summary and the running-estimate figure of what
// exists, whether or not the run completed.
func (o *output) finish(r *Result) error {
	f, err := os.Create(filepath.Join(o.dir, "result.json"))
	if err != nil {
		return fmt.Errorf("trj: %w", err)
	}
	err = r.WriteJSON(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("trj: writing result.json: %w", err)
	}
	if r.Chains != nil && r.Steps > 0 {
		if err := r.WriteRunningFigure(filepath.Join(o.dir, "running.png")); err != nil {
			return err
		}
	}
	return nil
}

// WriteRunningFigure draws each model's running estimate of π(k | y) over
// the kept steps of every chain, one panel per model, to path (.png or
// .svg).
func (r *Result) WriteRunningFigure(path string) error {
	if r.Chains == nil {
		return errors.New("trj: no chains to draw")
	}
	series := make(map[string][][]float64)
	var order []string
	for k, label := range r.Labels {
		name := label
		order = append(order, name)
		for _, c := range r.Chains.Chains {
			run := make([]float64, len(c.Models))
			n := 0
			for i, m := range c.Models {
				if m == k {
					n++
				}
				run[i] = float64(n) / float64(i+1)
			}
			series[name] = append(series[name], run)
		}
	}
	_, err := figures.RunningEstimates(path, "running estimates of π(k | y)", series, math.NaN(),
		figures.WithOrder(order...), figures.WithXLabel("step"), figures.WithYLabel("π(k | y)"))
	if err != nil {
		return fmt.Errorf("trj: running-estimate figure: %w", err)
	}
	return nil
}

// drawWriter streams each chain's constrained draws to its own CmdStan CSV
// file (draws.Stream: flushed at least every second), with a model__
// column; a model's parameters absent from the drawn model are nan.
type drawWriter struct {
	streams []*draws.Stream
	models  [][]ppl.Model // per chain, per model: constraining clones
	index   [][]int       // index[k][j]: column of model k's j-th constrained value
	row     [][]float64
	buf     [][]float64
	width   int
}

func (o *output) drawWriter(space *ppl.Space, s *Settings, algorithm string) (*drawWriter, error) {
	K := space.NumModels()
	w := &drawWriter{index: make([][]int, K)}
	var names []string
	col := map[string]int{}
	for k := range K {
		m, err := space.Model(k)
		if err != nil {
			return nil, err
		}
		for _, n := range m.ParamNames() {
			c, ok := col[n]
			if !ok {
				c = len(names)
				col[n] = c
				names = append(names, n)
			}
			w.index[k] = append(w.index[k], c)
		}
	}
	w.width = len(names)
	layout := draws.Layout{Params: names, Transdimensional: true}
	config := []draws.Setting{
		{Key: "method", Value: "transdimensional (" + algorithm + ")"},
		{Key: "seed", Value: strconv.FormatUint(s.Seed, 10)},
		{Key: "num_samples", Value: strconv.Itoa(s.Chains.Steps)},
		{Key: "num_warmup", Value: strconv.Itoa(s.Chains.Warmup)},
		{Key: "num_chains", Value: strconv.Itoa(s.Chains.Chains)},
		{Key: runs.FingerprintKey, Value: o.fingerprint},
	}
	for k := range K {
		config = append(config, draws.Setting{Key: fmt.Sprintf("model__ %d", k), Value: space.ModelLabel(k)})
	}
	chains := s.Chains.Shard
	if chains == nil {
		for c := range s.Chains.Chains {
			chains = append(chains, c)
		}
	}
	n := s.Chains.Chains
	w.streams = make([]*draws.Stream, n)
	w.models, w.row, w.buf = make([][]ppl.Model, n), make([][]float64, n), make([][]float64, n)
	for _, c := range chains {
		cfg := append(slices.Clone(config), draws.Setting{Key: "chain_id", Value: strconv.Itoa(c + 1)})
		st, err := draws.CreateStream(filepath.Join(o.dir, fmt.Sprintf("draws_%d.csv", c+1)), layout, cfg)
		if err != nil {
			w.close(nil)
			return nil, fmt.Errorf("trj: %w", err)
		}
		w.streams[c] = st
		w.models[c] = make([]ppl.Model, K)
		for k := range K {
			m, _ := space.Model(k)
			w.models[c][k] = m.Clone()
		}
		w.row[c] = make([]float64, w.width)
	}
	return w, nil
}

// write is the chains' OnDraw hook: chain c alone touches its own stream.
func (w *drawWriter) write(c, _ int, k int, theta []float64, _ kernels.RJInfo) error {
	idx := w.index[k]
	if cap(w.buf[c]) < len(idx) {
		w.buf[c] = make([]float64, len(idx))
	}
	vals := w.buf[c][:len(idx)]
	if err := w.models[c][k].Constrain(theta, vals); err != nil {
		return err
	}
	row := w.row[c]
	for i := range row {
		row[i] = math.NaN()
	}
	for j, col := range idx {
		row[col] = vals[j]
	}
	return w.streams[c].WriteModel(k, row, nil)
}

// close closes every stream, marking them interrupted when the chains
// stopped early (err non-nil): the interrupt rule, runs.CloseDraws.
func (w *drawWriter) close(err error) error {
	var first error
	for _, st := range w.streams {
		if st == nil {
			continue
		}
		if cerr := runs.CloseDraws(st, err, st.Close); cerr != nil && first == nil {
			first = cerr
		}
	}
	return first
}
