package figures

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/trjgo/trj/internal/scalar"
)

// Point is a point of a bivariate marginal.
type Point struct{ X, Y float64 }

// ScatterLayer is one set of points in a scatter panel, e.g. the source points
// or the points proposed by one proposal type.
type ScatterLayer struct {
	// Name labels the layer in the panel's legend (empty: no legend entry)
	// and chooses its colour, consistently across panels.
	Name string
	// Points are drawn as small dots; non-finite points are skipped.
	Points []Point
}

// ScatterPanel is one panel of Scatter.
type ScatterPanel struct {
	// Title heads the panel, e.g. "TRJ affine".
	Title string
	// XLabel and YLabel name the marginal's coordinates, e.g. "θ₁", "θ₂".
	XLabel, YLabel string
	// Background points, e.g. exact samples of the target, are drawn first
	// as light grey dots; may be empty.
	Background []Point
	// BackgroundName labels the background in the legend (empty: no entry).
	BackgroundName string
	// Contours draws, over the layers, contour lines of a Gaussian kernel
	// density estimate of Background enclosing 50%, 90% and 99% of its mass
	// (thicker towards the mode), so the exact target stays visible under
	// dense proposals. It needs at least three non-collinear background
	// points.
	Contours bool
	// Layers are drawn in order over the background.
	Layers []ScatterLayer
}

// Marginal returns the (i, j) bivariate marginal of draws, where draws[n] is
// one point of the full space: a convenience for building ScatterLayers.
func Marginal(draws [][]float64, i, j int) ([]Point, error) {
	if i < 0 || j < 0 {
		return nil, fmt.Errorf("figures: Marginal: negative coordinate (%d, %d)", i, j)
	}
	pts := make([]Point, len(draws))
	for n, d := range draws {
		if i >= len(d) || j >= len(d) {
			return nil, fmt.Errorf("figures: Marginal: draw %d has dimension %d, need coordinates %d and %d", n, len(d), i, j)
		}
		pts[n] = Point{X: d[i], Y: d[j]}
	}
	return pts, nil
}

// Scatter draws scatter panels on a grid (⌈√n⌉ columns unless WithColumns is
// given) and writes the figure to path (".png" or ".svg"). Panels whose axis
// labels are identical share x and y ranges, so that proposals for the same
// marginal can be compared at a glance.
//
// Each layer and the background are thinned to at most
// DefaultMaxScatterPoints points by a fixed stride (see WithMaxScatterPoints).
// Points with a non-finite coordinate are skipped and counted in skipped. It
// is an error if panels is empty, a panel has no finite point at all, or a
// panel asks for Contours of a background with fewer than three points or a
// singular covariance.
func Scatter(path, title string, panels []ScatterPanel, opts ...Option) (skipped int, err error) {
	cfg, err := newFigure(path, opts, "Scatter", "panels", len(panels))
	if err != nil {
		return 0, err
	}
	type rng struct{ xmin, xmax, ymin, ymax float64 }
	shared := make(map[[2]string]*rng)
	var pal colours
	plots := make([]*plot.Plot, len(panels))
	for k, sp := range panels {
		p := newPanel(sp.Title, sp.XLabel, sp.YLabel)
		r := &rng{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
		drawn := 0
		add := func(pts []Point, name string, sty draw.GlyphStyle, legendRadius vg.Length) error {
			xys, bad := finitePoints(pts, cfg.maxScatter)
			skipped += bad
			if len(xys) == 0 {
				return nil
			}
			s, err := plotter.NewScatter(xys)
			if err != nil {
				return fmt.Errorf("figures: Scatter: panel %d (%q): %w", k, sp.Title, err)
			}
			s.GlyphStyle = sty
			p.Add(s)
			if name != "" {
				thumb := *s
				thumb.GlyphStyle.Radius = legendRadius
				p.Legend.Add(name, &thumb)
			}
			x0, x1, y0, y1 := plotter.XYRange(xys)
			r.xmin, r.xmax = math.Min(r.xmin, x0), math.Max(r.xmax, x1)
			r.ymin, r.ymax = math.Min(r.ymin, y0), math.Max(r.ymax, y1)
			drawn += len(xys)
			return nil
		}
		bg := draw.GlyphStyle{Color: color.NRGBA{R: 0x88, G: 0x88, B: 0x88, A: 0x60}, Radius: vg.Points(1), Shape: draw.CircleGlyph{}}
		if err := add(sp.Background, sp.BackgroundName, bg, vg.Points(3)); err != nil {
			return skipped, err
		}
		for _, l := range sp.Layers {
			sty := draw.GlyphStyle{Color: withAlpha(pal.of(l.Name), 0.45), Radius: vg.Points(1.2), Shape: draw.CircleGlyph{}}
			if err := add(l.Points, l.Name, sty, vg.Points(3)); err != nil {
				return skipped, err
			}
		}
		if sp.Contours {
			xys, _ := finitePoints(sp.Background, math.MaxInt)
			ct, err := densityContours(xys)
			if err != nil {
				return skipped, fmt.Errorf("figures: Scatter: panel %d (%q) contours: %w", k, sp.Title, err)
			}
			p.Add(ct)
			if sp.BackgroundName != "" {
				p.Legend.Add(sp.BackgroundName+" density", lineThumb{contourStyle(1)})
			}
		}
		if drawn == 0 {
			return skipped, fmt.Errorf("%w: Scatter: panel %d (%q) has no finite point", ErrEmpty, k, sp.Title)
		}
		key := [2]string{sp.XLabel, sp.YLabel}
		if s, ok := shared[key]; ok {
			s.xmin, s.xmax = math.Min(s.xmin, r.xmin), math.Max(s.xmax, r.xmax)
			s.ymin, s.ymax = math.Min(s.ymin, r.ymin), math.Max(s.ymax, r.ymax)
		} else {
			shared[key] = r
		}
		plots[k] = p
	}
	for k, sp := range panels {
		r := shared[[2]string{sp.XLabel, sp.YLabel}]
		plots[k].X.Min, plots[k].X.Max = r.xmin, r.xmax
		plots[k].Y.Min, plots[k].Y.Max = r.ymin, r.ymax
	}
	layout := layoutGrid(plots, cfg.columns)
	return skipped, save(path, cfg, title, layout, 3.6*vg.Inch, 3.4*vg.Inch)
}

// finitePoints returns the finite points of pts thinned by a fixed stride to
// at most m, and the number of non-finite points.
func finitePoints(pts []Point, m int) (plotter.XYs, int) {
	xys := make(plotter.XYs, 0, len(pts))
	for _, q := range pts {
		if scalar.Finite(q.X) && scalar.Finite(q.Y) {
			xys = append(xys, plotter.XY{X: q.X, Y: q.Y})
		}
	}
	bad := len(pts) - len(xys)
	if len(xys) > m {
		stride := (len(xys) + m - 1) / m
		out := xys[:0]
		for i := 0; i < len(xys); i += stride {
			out = append(out, xys[i])
		}
		xys = out
	}
	return xys, bad
}
