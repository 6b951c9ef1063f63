package robustvs

import (
	"fmt"

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
		var sp []figures.ScatterPanel
		for _, pr := range [][2]int{{0, 1}, {2, 3}} {
			xl, yl := fmt.Sprintf("β%d", pr[0]), fmt.Sprintf("β%d", pr[1])
			src, err := figures.Marginal(r.Source, pr[0], pr[1])
			if err != nil {
				return w.Files(), err
			}
			sp = append(sp, figures.ScatterPanel{Title: "source: k = (1,1,0,0)", XLabel: xl, YLabel: yl,
				Layers: []figures.ScatterLayer{{Name: "source", Points: src}}})
			bg, err := figures.Marginal(r.Background, pr[0], pr[1])
			if err != nil {
				return w.Files(), err
			}
			for _, kind := range r.Order {
				prop, ok := r.Proposed[kind]
				if !ok || len(prop) == 0 {
					continue
				}
				pts, err := figures.Marginal(prop, pr[0], pr[1])
				if err != nil {
					return w.Files(), err
				}
				sp = append(sp, figures.ScatterPanel{Title: figureNames.Name(kind) + " → (1,1,1,1)", XLabel: xl, YLabel: yl,
					Background: bg, BackgroundName: "π(·|1,1,1,1)", Contours: len(bg) >= 3,
					Layers: []figures.ScatterLayer{{Name: figureNames.Name(kind), Points: pts}}})
			}
		}
		w.Write("robustvs_proposals", func(path string) error {
			_, err := figures.Scatter(path, "Robust variable selection: proposals from (1,1,0,0) to (1,1,1,1)", sp,
				figures.WithColumns(len(r.Proposed)+1))
			return err
		})
	}
	return w.Files(), w.Err()
}
