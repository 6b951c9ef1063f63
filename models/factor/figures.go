package factor

import (
	"github.com/trjgo/trj/internal/figures"
	"github.com/trjgo/trj/models/experiment"
)

// figureNames are the proposal types' display names, after the paper.
var figureNames = experiment.ProposalNames{"affine": "Affine TRJ", "rqma": "RQMA-NF TRJ", "lopes-west": "Lopes–West"}

// WriteFigures writes the experiment's figures into dir (created if
// needed), each as PNG and SVG, and returns the files written:
// factor_running (running estimates of π(2 factors) per proposal type),
// factor_bridge (violins of the bridge estimates) and factor_proposals
// (2-factor draws and their proposals into the 3-factor model on the
// loadings of variable 4 on factors 2 and 3, and of variable 5 on factors
// 1 and 3). Figures whose data the run did not produce are skipped.
func (r *Result) WriteFigures(dir string) ([]string, error) {
	w, err := experiment.NewFigureWriter(dir)
	if err != nil {
		return nil, err
	}
	w.WriteEstimates(experiment.Estimates{Base: "factor", Target: "Factor analysis", Probability: "π(2 factors)",
		Names: figureNames, Order: r.Order, Running: r.Running, Bridge: r.Bridge, Truth: Truth2})
	if len(r.Proposed) > 0 && len(r.Source) > 0 {
		// Rows are B (6×3) row-major: entry 3i+j is β_{i+1,j+1}.
		pairs := [][2]int{{3*3 + 1, 3*3 + 2}, {4*3 + 0, 4*3 + 2}}
		names := [][2]string{{"β₄₂", "β₄₃"}, {"β₅₁", "β₅₃"}}
		var panels []figures.ScatterPanel
		for pi, pr := range pairs {
			src, err := figures.Marginal(r.Source, pr[0], pr[1])
			if err != nil {
				return w.Files(), err
			}
			panels = append(panels, figures.ScatterPanel{
				Title: "source: 2-factor draws", XLabel: names[pi][0], YLabel: names[pi][1],
				Layers: []figures.ScatterLayer{{Name: "source", Points: src}},
			})
			bg, err := figures.Marginal(r.Background, pr[0], pr[1])
			if err != nil {
				return w.Files(), err
			}
			for _, k := range r.Order {
				prop, ok := r.Proposed[k]
				if !ok || len(prop) == 0 {
					continue
				}
				pts, err := figures.Marginal(prop, pr[0], pr[1])
				if err != nil {
					return w.Files(), err
				}
				panels = append(panels, figures.ScatterPanel{
					Title: figureNames.Name(k) + " → 3 factors", XLabel: names[pi][0], YLabel: names[pi][1],
					Background: bg, BackgroundName: "π(·|k=3)", Contours: len(bg) >= 3,
					Layers: []figures.ScatterLayer{{Name: figureNames.Name(k), Points: pts}},
				})
			}
		}
		w.Write("factor_proposals", func(path string) error {
			_, err := figures.Scatter(path, "Factor analysis: proposals from 2 to 3 factors", panels, figures.WithColumns(len(r.Proposed)+1))
			return err
		})
	}
	return w.Files(), w.Err()
}
