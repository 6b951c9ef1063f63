package sas

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/trjgo/trj/internal/figures"
)

// figureNames are the proposal types' display names in the figures, after
// the paper.
var figureNames = map[string]string{"exact": "Exact", "affine": "Affine", "rqma": "RQMA-NF"}

func figureName(kind string) string {
	if n, ok := figureNames[kind]; ok {
		return n
	}
	return kind
}

// WriteFigures writes the experiment's figures into dir (created if
// needed), each as PNG and SVG, and returns the files written:
// sas_running (running estimates of π(k=2), one panel per proposal type),
// sas_bridge (violins of the bridge estimates of π(k=2)) and sas_proposals
// (systematic draws of model k=1 and their proposals into model k=2, the
// paper's Figure 2). Figures whose data the run did not produce are
// skipped.
func (r *ExperimentResult) WriteFigures(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var order []string
	for _, k := range r.Order {
		order = append(order, figureName(k))
	}
	var files []string
	var errs []error
	write := func(base string, draw func(path string) error) {
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, base+ext)
			if err := draw(path); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", path, err))
				continue
			}
			files = append(files, path)
		}
	}
	if len(r.Running) > 0 {
		series := map[string][][]float64{}
		for k, v := range r.Running {
			series[figureName(k)] = v
		}
		write("sas_running", func(path string) error {
			_, err := figures.RunningEstimates(path, "SAS target: running estimates of π(k=2)", series, r.Truth,
				figures.WithOrder(order...), figures.WithYLabel("π̂(k=2)"))
			return err
		})
	}
	var groups []figures.Group
	for _, k := range r.Order {
		if v, ok := r.Bridge[k]; ok && anyFinite(v) {
			groups = append(groups, figures.Group{Name: figureName(k), Values: v})
		}
	}
	if len(groups) > 0 {
		write("sas_bridge", func(path string) error {
			_, err := figures.Violins(path, "SAS target: bridge estimates of π(k=2)", groups, r.Truth,
				figures.WithYLabel("π̂(k=2)"))
			return err
		})
	}
	if len(r.Proposed) > 0 && len(r.Source) > 0 {
		src, err := figures.Marginal(r.Source, 0, 1)
		if err != nil {
			return files, err
		}
		panels := []figures.ScatterPanel{{
			Title: "source: (θ, u), θ ~ π(·|k=1)", XLabel: "θ", YLabel: "u",
			Layers: []figures.ScatterLayer{{Name: "source", Points: src}},
		}}
		var bg []figures.Point
		if len(r.Background) > 0 {
			if bg, err = figures.Marginal(r.Background, 0, 1); err != nil {
				return files, err
			}
		}
		for _, k := range r.Order {
			prop, ok := r.Proposed[k]
			if !ok {
				continue
			}
			pts, err := figures.Marginal(prop, 0, 1)
			if err != nil {
				return files, err
			}
			panels = append(panels, figures.ScatterPanel{
				Title: figureName(k) + " TRJ proposal into k=2", XLabel: "θ₁", YLabel: "θ₂",
				Background: bg, BackgroundName: "π(·|k=2)",
				Layers: []figures.ScatterLayer{{Name: figureName(k), Points: pts}},
			})
		}
		write("sas_proposals", func(path string) error {
			_, err := figures.Scatter(path, "SAS target: proposals from k=1 to k=2", panels, figures.WithColumns(2))
			return err
		})
	}
	return files, errors.Join(errs...)
}

func anyFinite(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return true
		}
	}
	return false
}
