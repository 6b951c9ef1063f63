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
		panels, err := experiment.ProposalScatter{Source: r.Source, Background: r.Background, Proposed: r.Proposed, Order: r.Order,
			Names: figureNames, SourceTitle: "source: 2-factor draws", TargetSuffix: " → 3 factors", BackgroundName: "π(·|k=3)",
		}.Panels(pairs, names)
		if err != nil {
			return w.Files(), err
		}
		w.Write("factor_proposals", func(path string) error {
			_, err := figures.Scatter(path, "Factor analysis: proposals from 2 to 3 factors", panels, figures.WithColumns(len(r.Proposed)+1))
			return err
		})
	}
	return w.Files(), w.Err()
}
