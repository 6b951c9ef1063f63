package figures

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Default output settings, used when no Option overrides them.
const (
	// DefaultDPI is the resolution of PNG output in dots per inch.
	DefaultDPI = 150
	// DefaultMaxLinePoints is the largest number of points drawn per line;
	// longer series are thinned to evenly spaced indices (the last point is
	// always kept) because a running estimate of 10⁵ steps draws no better than
	// one of 2000 but is far slower to render and produces huge SVG files.
	DefaultMaxLinePoints = 2000
	// DefaultMaxScatterPoints is the largest number of points drawn per scatter
	// layer (and for the background); larger layers are thinned by a fixed
	// stride, which keeps output deterministic.
	DefaultMaxScatterPoints = 5000
)

// ErrUnknownFormat is returned (wrapped) when the output path does not end in
// ".png" or ".svg".
var ErrUnknownFormat = errors.New("figures: unknown output format (want .png or .svg)")

// ErrEmpty is returned (wrapped) when there is nothing to draw: no series, no
// groups, no panels, or a chain, group or panel with no finite values.
var ErrEmpty = errors.New("figures: nothing to draw")

// Option changes an output setting of a figure function.
type Option func(*config) error

type config struct {
	width, height vg.Length // zero means a default derived from the panel grid
	dpi           int
	columns       int
	order         []string
	overlay       bool
	xLabel        string
	yLabel        string
	setX, setY    bool
	maxLine       int
	maxScatter    int
	// xRange and yRange fix an axis when hi > lo (WithXRange, WithYRange).
	xRange, yRange [2]float64
	byChain        bool
}

func errRange(lo, hi float64) error {
	return fmt.Errorf("figures: axis range [%v, %v]: want finite lo < hi", lo, hi)
}

// newFigure checks a figure's options and its path's format (".png" or
// ".svg") and returns the options' config.
func newFigure(path string, opts []Option, fn, what string, n int) (*config, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if _, err := format(path); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: %s: no %s", ErrEmpty, fn, what)
	}
	return cfg, nil
}

func newConfig(opts []Option) (*config, error) {
	c := &config{dpi: DefaultDPI, maxLine: DefaultMaxLinePoints, maxScatter: DefaultMaxScatterPoints}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// WithSize sets the size of the whole figure (all panels and the title), e.g.
// WithSize(7*vg.Inch, 5*vg.Inch). For PNG output the image is width·dpi/inch
// by height·dpi/inch pixels, rounded. Without it the figure grows with its
// panel grid: per panel 6.5×2.4 in for RunningEstimates (6.5×3.6 in overlaid),
// at least 3.5×3 in for violins (wider for many or long group names), and
// 3.6×3.4 in for Scatter.
func WithSize(width, height vg.Length) Option {
	return func(c *config) error {
		if !(width > 0 && height > 0) || math.IsInf(float64(width), 0) || math.IsInf(float64(height), 0) {
			return fmt.Errorf("figures: size must be positive and finite, got %v×%v", width, height)
		}
		c.width, c.height = width, height
		return nil
	}
}

// WithDPI sets the resolution of PNG output in dots per inch; SVG output is
// vector and ignores it.
func WithDPI(dpi int) Option {
	return func(c *config) error {
		if dpi <= 0 || dpi > 2400 {
			return fmt.Errorf("figures: dpi must be in (0, 2400], got %d", dpi)
		}
		c.dpi = dpi
		return nil
	}
}

// WithColumns sets the number of panel columns of a multi-panel figure. By
// default a figure with n panels uses ⌈√n⌉ columns, except RunningEstimates,
// which stacks its panels in one column.
func WithColumns(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("figures: columns must be positive, got %d", n)
		}
		c.columns = n
		return nil
	}
}

// WithOrder sets the order in which RunningEstimates draws proposal types
// (panels, or legend entries when overlaid). Names not listed follow in sorted
// order; listed names absent from the data are an error, to catch typos.
func WithOrder(names ...string) Option {
	return func(c *config) error {
		c.order = append([]string(nil), names...)
		return nil
	}
}

// Overlay makes RunningEstimates draw all proposal types in one panel, one
// colour per type with a legend, instead of one panel per type.
func Overlay() Option {
	return func(c *config) error {
		c.overlay = true
		return nil
	}
}

// WithXLabel sets the x-axis label of every panel (RunningEstimates: default
// "iteration"; Violins: default none). Scatter panels use their own labels.
func WithXLabel(label string) Option {
	return func(c *config) error {
		c.xLabel, c.setX = label, true
		return nil
	}
}

// WithYLabel sets the y-axis label of every panel (RunningEstimates: default
// "running estimate"; Violins: default "estimate").
func WithYLabel(label string) Option {
	return func(c *config) error {
		c.yLabel, c.setY = label, true
		return nil
	}
}

// WithMaxLinePoints sets the largest number of points drawn per line
// (default DefaultMaxLinePoints); it must be at least 2.
func WithMaxLinePoints(n int) Option {
	return countOption("max line points", n, 2, func(c *config) *int { return &c.maxLine })
}

// WithMaxScatterPoints sets the largest number of points drawn per scatter
// layer and for the background (default DefaultMaxScatterPoints).
func WithMaxScatterPoints(n int) Option {
	return countOption("max scatter points", n, 1, func(c *config) *int { return &c.maxScatter })
}

// countOption sets the count that field points to to n, which must be at
// least least.
func countOption(what string, n, least int, field func(*config) *int) Option {
	return func(c *config) error {
		if n < least {
			return fmt.Errorf("figures: %s must be ≥ %d, got %d", what, least, n)
		}
		*field(c) = n
		return nil
	}
}

// format returns "png" or "svg" for path, or a wrapped ErrUnknownFormat.
func format(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
		return "png", nil
	case ".svg":
		return "svg", nil
	default:
		return "", fmt.Errorf("%w: %q", ErrUnknownFormat, path)
	}
}

// palette is the Okabe–Ito colour-blind-safe palette (black moved last, as it
// is used for truth lines).
var palette = []color.Color{
	color.NRGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	color.NRGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	color.NRGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	color.NRGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	color.NRGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	color.NRGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	color.NRGBA{R: 0xF0, G: 0xE4, B: 0x42, A: 0xFF}, // yellow
	color.NRGBA{R: 0x66, G: 0x66, B: 0x66, A: 0xFF}, // grey
}

// colours assigns palette colours to names in order of first appearance, so
// that one name keeps its colour across the panels of a figure.
type colours struct {
	index map[string]int
}

func (c *colours) of(name string) color.Color {
	if c.index == nil {
		c.index = make(map[string]int)
	}
	i, ok := c.index[name]
	if !ok {
		i = len(c.index)
		c.index[name] = i
	}
	return palette[i%len(palette)]
}

// withAlpha returns col with its alpha scaled to a ∈ [0, 1].
func withAlpha(col color.Color, a float64) color.Color {
	n := color.NRGBAModel.Convert(col).(color.NRGBA)
	n.A = uint8(math.Round(float64(n.A) * a))
	return n
}

// checkTruth validates a truth value: NaN means "no truth line", ±Inf is an
// error since it cannot be drawn.
func checkTruth(truth float64, where string) error {
	if math.IsInf(truth, 0) {
		return fmt.Errorf("figures: %s: truth is %v (use NaN to omit the truth line)", where, truth)
	}
	return nil
}

// thin returns at most m indices evenly spaced over [0, n), always including
// the first and last.
func thin(n, m int) []int {
	if n <= m {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, m)
	for k := range idx {
		idx[k] = int(math.Round(float64(k) * float64(n-1) / float64(m-1)))
	}
	return idx
}

// grid returns rows×cols for n panels with the requested number of columns
// (0 means ⌈√n⌉).
func grid(n, cols int) (rows, c int) {
	if cols <= 0 {
		cols = int(math.Ceil(math.Sqrt(float64(n))))
	}
	if cols > n {
		cols = n
	}
	return (n + cols - 1) / cols, cols
}

// titleStyle is the text style of a figure's overall title.
func titleStyle() draw.TextStyle {
	return draw.TextStyle{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, 13),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

// save lays out the panels (row-major, nil cells left blank) under an overall
// title and writes the figure to path. Rendering happens in memory first so a
// failure never leaves a partial file.
func save(path string, cfg *config, title string, panels [][]*plot.Plot, panelW, panelH vg.Length) (err error) {
	fmtName, err := format(path)
	if err != nil {
		return err
	}
	rows := len(panels)
	if rows == 0 || len(panels[0]) == 0 {
		return fmt.Errorf("%w: no panels", ErrEmpty)
	}
	cols := len(panels[0])
	// gonum/plot's tick search never ends on a NaN or infinite axis range,
	// which finite data can still produce when its span overflows (±1e308).
	for _, row := range panels {
		for _, p := range row {
			if p == nil {
				continue
			}
			for _, v := range []float64{p.X.Min, p.X.Max, p.Y.Min, p.Y.Max, p.X.Max - p.X.Min, p.Y.Max - p.Y.Min} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("figures: panel %q has axis range x [%v, %v], y [%v, %v]: the data span is too large to draw", p.Title.Text, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
				}
			}
		}
	}
	sty := titleStyle()
	titleH := vg.Length(0)
	if title != "" {
		titleH = sty.Rectangle(title).Size().Y + 6
	}
	w, h := cfg.width, cfg.height
	if w == 0 {
		w = vg.Length(cols) * panelW
		h = vg.Length(rows)*panelH + titleH
	}

	// gonum/plot panics on some degenerate inputs; the figure functions
	// validate their input, so a panic here is a bug, but it must still reach
	// the caller as an error rather than kill a long experiment run.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("figures: rendering %q failed: %v", path, r)
		}
	}()

	var buf bytes.Buffer
	var canvas vg.CanvasWriterTo
	switch fmtName {
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(cfg.dpi))}
	case "svg":
		canvas = vgsvg.New(w, h)
	}
	dc := draw.New(canvas)
	if title != "" {
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - 3}, title)
		dc.Max.Y -= titleH
	}
	tiles := draw.Tiles{
		Rows: rows, Cols: cols,
		PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 8,
		PadX: 12, PadY: 10,
	}
	cells := plot.Align(panels, tiles, dc)
	for i, row := range panels {
		for j, p := range row {
			if p != nil {
				p.Draw(cells[i][j])
			}
		}
	}
	if _, err := canvas.WriteTo(&buf); err != nil {
		return fmt.Errorf("figures: encoding %q: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("figures: %w", err)
	}
	return nil
}

// newPanel returns a plot with the package's common styling.
func newPanel(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Label.TextStyle.Font.Size = 10
	p.Y.Label.TextStyle.Font.Size = 10
	p.X.Tick.Label.Font.Size = 8
	p.Y.Tick.Label.Font.Size = 8
	p.Legend.TextStyle.Font.Size = 9
	p.Legend.Top = true
	p.Legend.ThumbnailWidth = 0.3 * vg.Inch
	p.Add(gridLines())
	return p
}

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
