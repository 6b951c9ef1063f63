package experiment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trjgo/trj/internal/figures"
	"github.com/trjgo/trj/internal/scalar"
)

// FigureWriter writes an experiment's figures into one directory, each as
// PNG and SVG, and collects the files written and the failures. A failed
// file does not stop the others, so one bad figure still leaves the rest.
type FigureWriter struct {
	dir   string
	files []string
	errs  []error
}

// NewFigureWriter returns a FigureWriter into dir, creating dir if needed.
func NewFigureWriter(dir string) (*FigureWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &FigureWriter{dir: dir}, nil
}

// Write calls draw with the paths dir/base.png and dir/base.svg in turn,
// recording each path draw succeeded on and each error, wrapped with its
// path.
func (w *FigureWriter) Write(base string, draw func(path string) error) {
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(w.dir, base+ext)
		if err := draw(path); err != nil {
			w.errs = append(w.errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		w.files = append(w.files, path)
	}
}

// Estimates are a two-model experiment's estimates of one model
// probability, for WriteEstimates.
type Estimates struct {
	// Base starts the file names: Base_running and Base_bridge.
	Base string
	// Target names the experiment in the titles; Probability is what is
	// estimated, as in "π(k=2)".
	Target, Probability string
	// Names and Order are the proposal types' display names and order.
	Names ProposalNames
	Order []string
	// Running[p][c] is chain c's running estimate under proposal type p;
	// Bridge[p] its bridge estimates, one per evaluation set.
	Running map[string][][]float64
	Bridge  map[string][]float64
	Truth   float64
}

// WriteEstimates writes e.Base_running (the chains' running estimates per
// proposal type) and e.Base_bridge (violins of the bridge estimates),
// skipping a figure when the run produced no data for it.
func (w *FigureWriter) WriteEstimates(e Estimates) {
	var order []string
	for _, k := range e.Order {
		order = append(order, e.Names.Name(k))
	}
	if len(e.Running) > 0 {
		series := map[string][][]float64{}
		for k, v := range e.Running {
			series[e.Names.Name(k)] = v
		}
		w.Write(e.Base+"_running", func(path string) error {
			_, err := figures.RunningEstimates(path, e.Target+": running estimates of "+e.Probability, series, e.Truth,
				figures.WithOrder(order...), figures.WithYLabel("π̂(k=2)"))
			return err
		})
	}
	var groups []figures.Group
	for _, k := range e.Order {
		if v, ok := e.Bridge[k]; ok && AnyFinite(v) {
			groups = append(groups, figures.Group{Name: e.Names.Name(k), Values: v})
		}
	}
	if len(groups) > 0 {
		w.Write(e.Base+"_bridge", func(path string) error {
			_, err := figures.Violins(path, e.Target+": bridge estimates of "+e.Probability, groups, e.Truth,
				figures.WithYLabel("π̂(k=2)"))
			return err
		})
	}
}

// Files returns the files written so far.
func (w *FigureWriter) Files() []string { return w.files }

// Err joins the errors of the writes so far; nil if there were none.
func (w *FigureWriter) Err() error { return errors.Join(w.errs...) }

// ProposalNames maps proposal types to their display names in figures.
type ProposalNames map[string]string

// Name returns the display name of kind, or kind itself if it has none.
func (n ProposalNames) Name(kind string) string {
	if s, ok := n[kind]; ok {
		return s
	}
	return kind
}

// AnyFinite reports whether v holds a finite value. Figures skip estimates
// that are all NaN or ±Inf, such as bridge estimates of a proposal type
// that never accepted a jump, since there is nothing to draw.
func AnyFinite(v []float64) bool {
	for _, x := range v {
		if scalar.Finite(x) {
			return true
		}
	}
	return false
}

// ProposalScatter is the data of a proposal-scatter figure: draws of a
// source model and, for each proposal type, their proposals into a target
// model, drawn over the target's own draws.
type ProposalScatter struct {
	Source, Background [][]float64
	// Proposed holds each proposal type's proposals; Order lists the types
	// to draw, Names their display names.
	Proposed map[string][][]float64
	Order    []string
	Names    ProposalNames
	// SourceTitle titles a source panel, TargetSuffix follows a proposal
	// type's name in the title of its panel, BackgroundName names the
	// target's draws.
	SourceTitle, TargetSuffix, BackgroundName string
}

// Panels returns, for each pair of coordinates coords[i] (labelled
// labels[i]), a panel of the source draws, then one panel per proposal type
// with proposals.
func (s ProposalScatter) Panels(coords [][2]int, labels [][2]string) ([]figures.ScatterPanel, error) {
	var panels []figures.ScatterPanel
	for i, pr := range coords {
		xl, yl := labels[i][0], labels[i][1]
		src, err := figures.Marginal(s.Source, pr[0], pr[1])
		if err != nil {
			return nil, err
		}
		panels = append(panels, figures.ScatterPanel{Title: s.SourceTitle, XLabel: xl, YLabel: yl,
			Layers: []figures.ScatterLayer{{Name: "source", Points: src}}})
		bg, err := figures.Marginal(s.Background, pr[0], pr[1])
		if err != nil {
			return nil, err
		}
		for _, kind := range s.Order {
			prop, ok := s.Proposed[kind]
			if !ok || len(prop) == 0 {
				continue
			}
			pts, err := figures.Marginal(prop, pr[0], pr[1])
			if err != nil {
				return nil, err
			}
			panels = append(panels, figures.ScatterPanel{Title: s.Names.Name(kind) + s.TargetSuffix, XLabel: xl, YLabel: yl,
				Background: bg, BackgroundName: s.BackgroundName, Contours: len(bg) >= 3,
				Layers: []figures.ScatterLayer{{Name: s.Names.Name(kind), Points: pts}}})
		}
	}
	return panels, nil
}
