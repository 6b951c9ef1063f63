package figures

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/trjgo/trj/internal/scalar"
)

// Group is one violin: the repeated estimates from one proposal type.
type Group struct {
	// Name labels the violin on the x axis, e.g. "RQMA-NF TRJ".
	Name string
	// Values are the repeated estimates; non-finite values are skipped.
	Values []float64
}

// ViolinPanel is one panel of ViolinPanels, e.g. one model label.
type ViolinPanel struct {
	// Title heads the panel, e.g. "k = (1,1,1,1)".
	Title string
	// Groups are the violins, drawn left to right.
	Groups []Group
	// Truth is drawn as a dashed horizontal line; NaN omits it. Note that
	// the zero value draws a line at 0.
	Truth float64
}

// violinGridSize is the number of points at which each density is evaluated.
const violinGridSize = 256

// Violins draws one violin per group (a Gaussian kernel density estimate with
// Silverman's bandwidth, mirrored about the group's x position and trimmed to
// the data range, with a white median dot and a black interquartile bar) and a
// dashed horizontal line at truth (NaN omits it), and writes the figure to path
// (".png" or ".svg").
//
// A group whose finite values are all equal (or that has one value) has no
// density: it is drawn as a horizontal tick with its median dot. Non-finite
// values are skipped and counted in skipped; a group with no finite value, an
// empty name, or an empty groups slice is an error.
func Violins(path, title string, groups []Group, truth float64, opts ...Option) (skipped int, err error) {
	return ViolinPanels(path, title, []ViolinPanel{{Groups: groups, Truth: truth}}, opts...)
}

// ViolinPanels draws several violin panels, e.g. one per model label, on a
// grid (⌈√n⌉ columns unless WithColumns is given), each panel as Violins does
// with its own y range and truth line. A group name keeps its colour across
// panels. The figure is written to path (".png" or ".svg"). Non-finite values
// are skipped and counted in skipped; an empty panels slice, a panel without
// groups, or a group without finite values is an error.
func ViolinPanels(path, title string, panels []ViolinPanel, opts ...Option) (skipped int, err error) {
	cfg, err := newFigure(path, opts, "ViolinPanels", "panels", len(panels))
	if err != nil {
		return 0, err
	}
	yLabel := "estimate"
	if cfg.setY {
		yLabel = cfg.yLabel
	}
	var pal colours
	plots := make([]*plot.Plot, len(panels))
	maxGroups := 0
	for k, vp := range panels {
		if len(vp.Groups) == 0 {
			return skipped, fmt.Errorf("%w: ViolinPanels: panel %d (%q) has no groups", ErrEmpty, k, vp.Title)
		}
		if err := checkTruth(vp.Truth, fmt.Sprintf("panel %d (%q)", k, vp.Title)); err != nil {
			return skipped, err
		}
		maxGroups = max(maxGroups, len(vp.Groups))
		p := newPanel(vp.Title, cfg.xLabel, yLabel)
		names := make([]string, len(vp.Groups))
		for i, g := range vp.Groups {
			if g.Name == "" {
				return skipped, fmt.Errorf("figures: ViolinPanels: panel %d group %d has an empty name", k, i)
			}
			names[i] = g.Name
			v, bad := newViolin(float64(i), g.Values, pal.of(g.Name))
			skipped += bad
			if v == nil {
				return skipped, fmt.Errorf("%w: ViolinPanels: panel %d (%q) group %q has no finite value (%d values)", ErrEmpty, k, vp.Title, g.Name, len(g.Values))
			}
			p.Add(v)
		}
		if !math.IsNaN(vp.Truth) {
			t := truthLine(vp.Truth)
			p.Add(t)
			p.Legend.Add("truth "+fmt.Sprintf("%.4g", vp.Truth), t)
		}
		p.NominalX(names...)
		p.X.Tick.Label.Font.Size = 9
		plots[k] = p
	}
	layout := layoutGrid(plots, cfg.columns)

	// Size panels so that the longest group name fits under its violin; if
	// the caller fixed a size too small for that, slant the names instead of
	// letting them overlap.
	var labelW vg.Length
	for k, vp := range panels {
		for _, g := range vp.Groups {
			labelW = max(labelW, plots[k].X.Tick.Label.Rectangle(g.Name).Size().X)
		}
	}
	const axisW = 0.7 * vg.Inch // room for the y axis, its label and padding
	slot := labelW + 0.12*vg.Inch
	panelW := max(3.5*vg.Inch, vg.Length(maxGroups)*slot+axisW)
	if cfg.width > 0 {
		cols := len(layout[0])
		if avail := (cfg.width/vg.Length(cols) - axisW) / vg.Length(maxGroups); avail < slot {
			for _, p := range plots {
				p.X.Tick.Label.Rotation = math.Pi / 6
				p.X.Tick.Label.XAlign = draw.XRight
				p.X.Tick.Label.YAlign = draw.YCenter
			}
		}
	}
	return skipped, save(path, cfg, title, layout, panelW, 3*vg.Inch)
}

// violin is a plot.Plotter drawing one violin centred at X.
type violin struct {
	X         float64 // centre, in data units
	HalfWidth float64 // half the widest part, in data units

	Y       []float64 // increasing evaluation grid, from the smallest to the largest value
	Density []float64 // kernel density estimate at Y; nil for a degenerate group

	Median, Q1, Q3 float64

	Fill    color.Color
	Outline draw.LineStyle
	Bar     draw.LineStyle  // interquartile bar
	Dot     draw.GlyphStyle // median marker
	Tick    draw.LineStyle  // degenerate-group marker
}

// newViolin builds the violin of the finite values in vals at x. It returns
// the number of non-finite values skipped, and nil if none are finite.
func newViolin(x float64, vals []float64, col color.Color) (*violin, int) {
	data := make([]float64, 0, len(vals))
	for _, v := range vals {
		if scalar.Finite(v) {
			data = append(data, v)
		}
	}
	bad := len(vals) - len(data)
	if len(data) == 0 {
		return nil, bad
	}
	sort.Float64s(data)
	v := &violin{
		X:         x,
		HalfWidth: 0.4,
		Median:    stat.Quantile(0.5, stat.LinInterp, data, nil),
		Q1:        stat.Quantile(0.25, stat.LinInterp, data, nil),
		Q3:        stat.Quantile(0.75, stat.LinInterp, data, nil),
		Fill:      withAlpha(col, 0.45),
		Outline:   draw.LineStyle{Color: col, Width: vg.Points(1)},
		Bar:       draw.LineStyle{Color: color.Black, Width: vg.Points(3)},
		Dot: draw.GlyphStyle{
			Color:  color.White,
			Radius: vg.Points(2.2),
			Shape:  draw.CircleGlyph{},
		},
		Tick: draw.LineStyle{Color: col, Width: vg.Points(2)},
	}
	lo, hi := data[0], data[len(data)-1]
	h := silverman(data)
	if h > 0 && hi > lo {
		v.Y = make([]float64, violinGridSize)
		floats.Span(v.Y, lo, hi)
		v.Density = make([]float64, violinGridSize)
		gaussianKDE(v.Density, v.Y, data, h)
	} else {
		v.Y = []float64{lo, hi}
	}
	return v, bad
}

// silverman returns Silverman's rule-of-thumb bandwidth
// 0.9·min(σ̂, IQR/1.34)·n^(-1/5) for sorted data, falling back to σ̂ when the
// interquartile range is zero; it is 0 for fewer than two points or constant
// data.
func silverman(sorted []float64) float64 {
	n := len(sorted)
	if n < 2 {
		return 0
	}
	sd := stat.StdDev(sorted, nil)
	iqr := stat.Quantile(0.75, stat.LinInterp, sorted, nil) - stat.Quantile(0.25, stat.LinInterp, sorted, nil)
	a := sd
	if iqr > 0 && iqr/1.34 < a {
		a = iqr / 1.34
	}
	if !(a > 0) || math.IsInf(a, 0) {
		return 0
	}
	return 0.9 * a * math.Pow(float64(n), -0.2)
}

// gaussianKDE sets dst[i] to the Gaussian kernel density estimate with
// bandwidth h of data at at[i]; it integrates to 1 over the real line.
func gaussianKDE(dst, at, data []float64, h float64) {
	norm := 1 / (float64(len(data)) * h * math.Sqrt(2*math.Pi))
	for i, y := range at {
		var s float64
		for _, x := range data {
			u := (y - x) / h
			s += math.Exp(-0.5 * u * u)
		}
		dst[i] = s * norm
	}
}

// Plot implements plot.Plotter.
func (v *violin) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	if v.Density != nil {
		dmax := floats.Max(v.Density)
		n := len(v.Y)
		pts := make([]vg.Point, 0, 2*n)
		for i := 0; i < n; i++ {
			w := v.HalfWidth * v.Density[i] / dmax
			pts = append(pts, vg.Point{X: trX(v.X + w), Y: trY(v.Y[i])})
		}
		for i := n - 1; i >= 0; i-- {
			w := v.HalfWidth * v.Density[i] / dmax
			pts = append(pts, vg.Point{X: trX(v.X - w), Y: trY(v.Y[i])})
		}
		c.FillPolygon(v.Fill, c.ClipPolygonXY(pts))
		c.StrokeLines(v.Outline, c.ClipLinesXY(append(pts, pts[0]))...)
	} else {
		y := trY(v.Median)
		c.StrokeLines(v.Tick, c.ClipLinesXY([]vg.Point{{X: trX(v.X - v.HalfWidth/2), Y: y}, {X: trX(v.X + v.HalfWidth/2), Y: y}})...)
	}
	x := trX(v.X)
	if v.Q3 > v.Q1 {
		c.StrokeLines(v.Bar, c.ClipLinesXY([]vg.Point{{X: x, Y: trY(v.Q1)}, {X: x, Y: trY(v.Q3)}})...)
	}
	pt := vg.Point{X: x, Y: trY(v.Median)}
	if c.Contains(pt) {
		c.DrawGlyph(v.Dot, pt)
		c.DrawGlyph(draw.GlyphStyle{Color: color.Black, Radius: v.Dot.Radius, Shape: draw.RingGlyph{}}, pt)
	}
}

// DataRange implements plot.DataRanger.
func (v *violin) DataRange() (xmin, xmax, ymin, ymax float64) {
	return v.X - 0.5, v.X + 0.5, v.Y[0], v.Y[len(v.Y)-1]
}

// GlyphBoxes implements plot.GlyphBoxer so that the median dot is not
// clipped at the edge of the data area.
func (v *violin) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	return []plot.GlyphBox{{
		X:         p.X.Norm(v.X),
		Y:         p.Y.Norm(v.Median),
		Rectangle: v.Dot.Rectangle(),
	}}
}
