package figures

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/trjgo/trj/internal/scalar"
)

// Interval is one estimate with its uncertainty interval [Low, High] and,
// when Ref is not NaN, a reference value to compare it with.
type Interval struct {
	Name             string
	Value, Low, High float64
	Ref              float64
}

// intervalRows adapts intervals to plotter's XYer and XErrorer, row i at
// y = n-1-i so that the first interval is drawn at the top.
type intervalRows []Interval

func (r intervalRows) Len() int { return len(r) }
func (r intervalRows) XY(i int) (float64, float64) {
	return r[i].Value, float64(len(r) - 1 - i)
}
func (r intervalRows) XError(i int) (float64, float64) {
	return r[i].Value - r[i].Low, r[i].High - r[i].Value
}

// Intervals draws each interval as a point with a horizontal error bar, one
// row per interval, first at the top, labelled by name, and each finite Ref
// as a cross; it writes the figure to path (".png" or ".svg"). The x label
// is "estimate" unless WithXLabel is given. It is an error if rows is empty,
// a name is empty, or a value or bound is not finite or not ordered
// Low ≤ Value ≤ High.
func Intervals(path, title string, rows []Interval, opts ...Option) error {
	cfg, err := newFigure(path, opts, "Intervals", "rows", len(rows))
	if err != nil {
		return err
	}
	var refs plotter.XYs
	ticks := make([]plot.Tick, len(rows))
	for i, r := range rows {
		if r.Name == "" {
			return fmt.Errorf("figures: Intervals: row %d has no name", i)
		}
		if !scalar.AllFinite([]float64{r.Value, r.Low, r.High}) || r.Low > r.Value || r.Value > r.High {
			return fmt.Errorf("figures: Intervals: row %q: need finite Low ≤ Value ≤ High, got %g ≤ %g ≤ %g", r.Name, r.Low, r.Value, r.High)
		}
		y := float64(len(rows) - 1 - i)
		ticks[i] = plot.Tick{Value: y, Label: r.Name}
		if scalar.Finite(r.Ref) {
			refs = append(refs, plotter.XY{X: r.Ref, Y: y})
		}
	}
	xLabel := "estimate"
	if cfg.setX {
		xLabel = cfg.xLabel
	}
	p := newPanel("", xLabel, "")
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	// A band of one row above the first keeps the key clear of the bars.
	panelH := vg.Length(math.Max(2.5, 0.28*float64(len(rows))+1.5)) * vg.Inch
	p.Y.Min, p.Y.Max = -0.7, float64(len(rows))-0.3
	p.Y.Max += (p.Y.Max - p.Y.Min) * keyBand(panelH-0.9*vg.Inch)

	var pal colours
	col := pal.of("estimate")
	bars, err := plotter.NewXErrorBars(intervalRows(rows))
	if err != nil {
		return fmt.Errorf("figures: Intervals: %w", err)
	}
	bars.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.2)}
	bars.CapWidth = vg.Points(5)
	pts, err := plotter.NewScatter(intervalRows(rows))
	if err != nil {
		return fmt.Errorf("figures: Intervals: %w", err)
	}
	pts.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	p.Add(bars, pts)
	key := newKeyRow(p)
	key.add("estimate ± interval", pts)
	if len(refs) > 0 {
		rs, err := plotter.NewScatter(refs)
		if err != nil {
			return fmt.Errorf("figures: Intervals: %w", err)
		}
		rs.GlyphStyle = draw.GlyphStyle{Color: pal.of("reference"), Radius: vg.Points(3.5), Shape: draw.CrossGlyph{}}
		p.Add(rs)
		key.add("reference", rs)
	}
	p.Add(key)
	if r := cfg.xRange; r[1] > r[0] {
		p.X.Min, p.X.Max = r[0], r[1]
	}
	return save(path, cfg, title, [][]*plot.Plot{{p}}, 6.5*vg.Inch, panelH)
}
