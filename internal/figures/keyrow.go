package figures

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// keyRow is a legend laid out on one line at the top of the data area, in
// a band that the panel's axis range keeps above the data (keyBand), so
// that it never covers a point or a line, whatever the data.
type keyRow struct {
	style   draw.TextStyle
	entries []keyEntry
}

type keyEntry struct {
	label string
	thumb plot.Thumbnailer
}

func newKeyRow(p *plot.Plot) *keyRow {
	sty := p.Legend.TextStyle
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	return &keyRow{style: sty}
}

func (k *keyRow) add(label string, thumb plot.Thumbnailer) {
	k.entries = append(k.entries, keyEntry{label, thumb})
}

// Plot draws the entries left to right at the top of c.
func (k *keyRow) Plot(c draw.Canvas, _ *plot.Plot) {
	h := k.style.Height("M")
	y := c.Max.Y - 1.3*h
	x := c.Min.X + vg.Points(6)
	w := vg.Points(18)
	for _, e := range k.entries {
		tc := &draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + h}}}
		e.thumb.Thumbnail(tc)
		x += w + vg.Points(4)
		c.FillText(k.style, vg.Point{X: x, Y: y}, e.label)
		x += k.style.Width(e.label) + vg.Points(14)
	}
}

// keyBand is the share of a panel's data range kept free above the data
// for a keyRow: one line of 9-point text in a data area of height h.
func keyBand(h vg.Length) float64 {
	return math.Min(0.5, float64(vg.Points(20))/math.Max(1, float64(h)))
}

// WithXRange fixes the x axis of Intervals to [lo, hi] (a probability's
// [0, 1], say) instead of the data's range.
func WithXRange(lo, hi float64) Option {
	return rangeOption(lo, hi, func(c *config) *[2]float64 { return &c.xRange })
}

// WithYRange fixes the y axis of RunningEstimates to [lo, hi] instead of
// the data's range.
func WithYRange(lo, hi float64) Option {
	return rangeOption(lo, hi, func(c *config) *[2]float64 { return &c.yRange })
}

func rangeOption(lo, hi float64, field func(*config) *[2]float64) Option {
	return func(c *config) error {
		if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return errRange(lo, hi)
		}
		*field(c) = [2]float64{lo, hi}
		return nil
	}
}

// ByChain makes RunningEstimates colour the lines by chain (one colour per
// chain, named in a key above the first panel's data) instead of by type,
// so that a chain stuck apart from the others shows in every panel.
func ByChain() Option {
	return func(c *config) error {
		c.byChain = true
		return nil
	}
}

// chainName names chain c (from 0) in a key: "chain 1", ….
func chainName(c int) string { return "chain " + strconv.Itoa(c+1) }
