package figures

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// gridLines returns a light background grid.
func gridLines() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xE4}
	g.Horizontal.Color = color.Gray{Y: 0xE4}
	g.Vertical.Width = 0.5
	g.Horizontal.Width = 0.5
	return g
}

// hLine is a horizontal line across the whole data area at height Y; it is
// used for truth values. It widens the y range to include Y but leaves the x
// range to the data, so it spans whatever x range the other plotters set.
type hLine struct {
	Y float64
	draw.LineStyle
}

func truthLine(y float64) *hLine {
	return &hLine{Y: y, LineStyle: draw.LineStyle{
		Color:  color.Black,
		Width:  vg.Points(1.2),
		Dashes: []vg.Length{vg.Points(5), vg.Points(3)},
	}}
}

// Plot implements plot.Plotter.
func (l *hLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(l.Y)
	c.StrokeLines(l.LineStyle, c.ClipLinesY([]vg.Point{{X: c.Min.X, Y: y}, {X: c.Max.X, Y: y}})...)
}

// DataRange implements plot.DataRanger; the infinite x bounds are neutral
// for plot.Add, which takes minima and maxima.
func (l *hLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), l.Y, l.Y
}

// Thumbnail implements plot.Thumbnailer for the legend.
func (l *hLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.LineStyle, c.Min.X, y, c.Max.X, y)
}
