package sas

import (
	"github.com/trjgo/trj/internal/figures"
	"github.com/trjgo/trj/models/experiment"
)

// figureNames are the proposal types' display names in the figures, after
// the paper.
var figureNames = experiment.ProposalNames{"exact": "Exact", "affine": "Affine", "rqma": "RQMA-NF"}

// WriteFigures writes the experiment's figures into dir (created if
// needed), each as PNG and SVG, and returns the files written:
// sas_running (running estimates of π(k=2), one panel per proposal type),
// sas_bridge (violins of the bridge estimates of π(k=2)) and sas_proposals
// (systematic draws of model k=1 and their proposals into model k=2, the
// paper's Figure 2). Figures whose data the run did not produce are
// skipped.
func (r *Result) WriteFigures(dir string) ([]string, error) {
	w, err := experiment.NewFigureWriter(dir)
	if err != nil {
		return nil, err
	}
	w.WriteEstimates(experiment.Estimates{Base: "sas", Target: "SAS target", Probability: "π(k=2)",
		Names: figureNames, Order: r.Order, Running: r.Running, Bridge: r.Bridge, Truth: r.Truth})
	if len(r.Proposed) > 0 && len(r.Source) > 0 {
		src, err := figures.Marginal(r.Source, 0, 1)
		if err != nil {
			return w.Files(), err
		}
		panels := []figures.ScatterPanel{{
			Title: "source: (θ, u), θ ~ π(·|k=1)", XLabel: "θ", YLabel: "u",
			Layers: []figures.ScatterLayer{{Name: "source", Points: src}},
		}}
		var bg []figures.Point
		if len(r.Background) > 0 {
			if bg, err = figures.Marginal(r.Background, 0, 1); err != nil {
				return w.Files(), err
			}
		}
		for _, k := range r.Order {
			prop, ok := r.Proposed[k]
			if !ok {
				continue
			}
			pts, err := figures.Marginal(prop, 0, 1)
			if err != nil {
				return w.Files(), err
			}
			panels = append(panels, figures.ScatterPanel{
				Title: figureNames.Name(k) + " TRJ proposal into k=2", XLabel: "θ₁", YLabel: "θ₂",
				Background: bg, BackgroundName: "π(·|k=2)",
				Layers: []figures.ScatterLayer{{Name: figureNames.Name(k), Points: pts}},
			})
		}
		w.Write("sas_proposals", func(path string) error {
			_, err := figures.Scatter(path, "SAS target: proposals from k=1 to k=2", panels, figures.WithColumns(2))
			return err
		})
	}
	return w.Files(), w.Err()
}
