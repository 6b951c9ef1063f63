package figures

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/trjgo/trj/internal/scalar"
)

// Manhattan draws one value per position (a PIP per term, in the order of
// the terms along the genome, say) as points on a fixed 0–1 axis: the
// terms of group g ≥ 0 (a credible set) in the palette's g-th colour with
// a key entry groups[g], the rest in grey; label[i], when not empty, is
// written beside point i. It stays readable at any number of positions.
// It writes the figure to path (".png" or ".svg") and is an error if
// values is empty, a value is not in [0, 1], or group and label are not
// of values' length.
func Manhattan(path, title string, values []float64, group []int, groups []string, label []string, opts ...Option) error {
	cfg, err := newFigure(path, opts, "Manhattan", "values", len(values))
	if err != nil {
		return err
	}
	if len(group) != len(values) || len(label) != len(values) {
		return fmt.Errorf("figures: Manhattan: %d groups and %d labels for %d values", len(group), len(label), len(values))
	}
	rest := plotter.XYs{}
	by := make([]plotter.XYs, len(groups))
	var labels plotter.XYLabels
	for i, v := range values {
		if !scalar.Finite(v) || v < 0 || v > 1 {
			return fmt.Errorf("figures: Manhattan: value %d is %v, want one in [0, 1]", i, v)
		}
		xy := plotter.XY{X: float64(i + 1), Y: v}
		switch g := group[i]; {
		case g >= len(groups):
			return fmt.Errorf("figures: Manhattan: value %d in group %d of %d", i, g, len(groups))
		case g >= 0:
			by[g] = append(by[g], xy)
		default:
			rest = append(rest, xy)
		}
		if label[i] != "" {
			labels.XYs = append(labels.XYs, xy)
			labels.Labels = append(labels.Labels, " "+label[i])
		}
	}
	xLabel := "position"
	if cfg.setX {
		xLabel = cfg.xLabel
	}
	p := newPanel("", xLabel, "posterior inclusion probability")
	p.X.Min, p.X.Max = 0, float64(len(values)+1)
	panelH := 3.6 * vg.Inch
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Max += keyBand(panelH - 0.9*vg.Inch)
	key := newKeyRow(p)
	if len(rest) > 0 {
		s, err := plotter.NewScatter(rest)
		if err != nil {
			return fmt.Errorf("figures: Manhattan: %w", err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: palette[len(palette)-1], Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
		p.Add(s)
	}
	for g, xys := range by {
		if len(xys) == 0 {
			continue
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return fmt.Errorf("figures: Manhattan: %w", err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: palette[g%(len(palette)-1)], Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		p.Add(s)
		key.add(groups[g], s)
	}
	if len(labels.XYs) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return fmt.Errorf("figures: Manhattan: %w", err)
		}
		p.Add(l)
	}
	p.Add(key)
	return save(path, cfg, title, [][]*plot.Plot{{p}}, 7.5*vg.Inch, panelH)
}
