package robustvs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trjgo/trj/internal/figures"
)

// figureNames are the proposal types' display names, after the paper.
var figureNames = map[string]string{
	"affine": "Affine TRJ", "rqma": "Indiv RQMA-NF TRJ", "crqma": "RQMA-CNF CTRJ", "indep-aux": "Indep. aux.",
}

func figureName(kind string) string {
	if n, ok := figureNames[kind]; ok {
		return n
	}
	return kind
}

// WriteFigures writes the experiment's figures into dir (created if
// needed), each as PNG and SVG, and returns the files written:
// robustvs_bridge (violins of the bridge estimates, one panel per model)
// and robustvs_proposals (draws of model (1,1,0,0) and their proposals
// into (1,1,1,1) on the (β₀, β₁) and (β₂, β₃) marginals).
func (r *Result) WriteFigures(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
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
	var panels []figures.ViolinPanel
	for k, l := range r.Models {
		p := figures.ViolinPanel{Title: "k = (" + l + ")", Truth: float64(r.Truth[l])}
		for _, kind := range r.Order {
			if v, ok := r.Bridge[kind]; ok && k < len(v) && anyFinite(v[k]) {
				p.Groups = append(p.Groups, figures.Group{Name: figureName(kind), Values: v[k]})
			}
		}
		if len(p.Groups) > 0 {
			panels = append(panels, p)
		}
	}
	if len(panels) > 0 {
		write("robustvs_bridge", func(path string) error {
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
				return files, err
			}
			sp = append(sp, figures.ScatterPanel{Title: "source: k = (1,1,0,0)", XLabel: xl, YLabel: yl,
				Layers: []figures.ScatterLayer{{Name: "source", Points: src}}})
			bg, err := figures.Marginal(r.Background, pr[0], pr[1])
			if err != nil {
				return files, err
			}
			for _, kind := range r.Order {
				prop, ok := r.Proposed[kind]
				if !ok || len(prop) == 0 {
					continue
				}
				pts, err := figures.Marginal(prop, pr[0], pr[1])
				if err != nil {
					return files, err
				}
				sp = append(sp, figures.ScatterPanel{Title: figureName(kind) + " → (1,1,1,1)", XLabel: xl, YLabel: yl,
					Background: bg, BackgroundName: "π(·|1,1,1,1)", Contours: len(bg) >= 3,
					Layers: []figures.ScatterLayer{{Name: figureName(kind), Points: pts}}})
			}
		}
		write("robustvs_proposals", func(path string) error {
			_, err := figures.Scatter(path, "Robust variable selection: proposals from (1,1,0,0) to (1,1,1,1)", sp,
				figures.WithColumns(len(r.Proposed)+1))
			return err
		})
	}
	return files, errors.Join(errs...)
}

func anyFinite(v []float64) bool {
	for _, x := range v {
		if x == x && x-x == 0 {
			return true
		}
	}
	return false
}
