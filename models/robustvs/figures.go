package robustvs

import (
	"github.com/trjgo/trj/internal/figures"
	"github.com/trjgo/trj/models/experiment"
)

// figureNames are the proposal types' display names, after the paper.
var figureNames = experiment.ProposalNames{
	"affine": "Affine TRJ", "rqma": "Indiv RQMA-NF TRJ", "crqma": "RQMA-CNF CTRJ", "indep-aux": "Indep. aux.",
}

// WriteFigures writes the experiment's figures into dir (created if
// needed), each as PNG and SVG, and returns the files written:
// robustvs_bridge (violins of the bridge estimates, one panel per model)
// and robustvs_proposals (draws of model (1,1,0,0) and their proposals
// into (1,1,1,1) on the (β₀, β₁) and (β₂, β₃) marginals).
func (r *Result) WriteFigures(dir string) ([]string, error) {
	w, err := experiment.NewFigureWriter(dir)
	if err != nil {
		return nil, err
	}
	var panels []figures.ViolinPanel
	for k, l := range r.Models {
		p := figures.ViolinPanel{Title: "k = (" + l + ")", Truth: float64(r.Truth[l])}
		for _, kind := range r.Order {
			if v, ok := r.Bridge[kind]; ok && k < len(v) && experiment.AnyFinite(v[k]) {
				p.Groups = append(p.Groups, figures.Group{Name: figureNames.Name(kind), Values: v[k]})
			}
		}
		if len(p.Groups) > 0 {
			panels = append(panels, p)
		}
	}
	if len(panels) > 0 {
		w.Write("robustvs_bridge", func(path string) error {
			_, err := figures.ViolinPanels(path, "Robust variable selection: bridge estimates of model probabilities", panels,
				figures.WithColumns(2), figures.WithYLabel("π̂(k)"))
			return err
		})
	}
	if len(r.Proposed) > 0 && len(r.Source) > 0 {
		sp, err := experiment.ProposalScatter{Source: r.Source, Background: r.Background, Proposed: r.Proposed, Order: r.Order,
			Names: figureNames, SourceTitle: "source: k = (1,1,0,0)", TargetSuffix: " → (1,1,1,1)", BackgroundName: "π(·|1,1,1,1)",
		}.Panels([][2]int{{0, 1}, {2, 3}}, [][2]string{{"β0", "β1"}, {"β2", "β3"}})
		if err != nil {
			return w.Files(), err
		}
		w.Write("robustvs_proposals", func(path string) error {
			_, err := figures.Scatter(path, "Robust variable selection: proposals from (1,1,0,0) to (1,1,1,1)", sp,
				figures.WithColumns(len(r.Proposed)+1))
			return err
		})
	}
	return w.Files(), w.Err()
}
