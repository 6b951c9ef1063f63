package figures

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/trjgo/trj/internal/scalar"
)

// RunningEstimates draws running estimates of a model probability and writes
// the figure to path (".png" or ".svg").
//
// series maps a proposal type (e.g. "affine", "rqma", "exact") to its chains;
// series[name][c][i] is chain c's running estimate after iteration i+1, drawn
// at x = i+1. Chains may differ in length. Each proposal type gets its own
// panel (stacked in one column unless WithColumns is given), all panels share
// x and y ranges, and each chain is drawn in the type's colour. With Overlay
// all types share one panel with a legend. Types are ordered by WithOrder,
// otherwise by name. A dashed horizontal line marks truth; pass NaN to omit it.
//
// Long chains are thinned to at most DefaultMaxLinePoints points (see
// WithMaxLinePoints). Non-finite estimates are skipped (the line joins their
// neighbours) and counted in skipped. It is an error if series is empty, a
// name is empty, a type has no chains, or a chain has no finite value.
func RunningEstimates(path, title string, series map[string][][]float64, truth float64, opts ...Option) (skipped int, err error) {
	cfg, err := newFigure(path, opts, "RunningEstimates", "series", len(series))
	if err != nil {
		return 0, err
	}
	if err := checkTruth(truth, "RunningEstimates"); err != nil {
		return 0, err
	}
	names, err := ordered(series, cfg.order)
	if err != nil {
		return 0, err
	}
	xLabel, yLabel := "iteration", "running estimate"
	if cfg.setX {
		xLabel = cfg.xLabel
	}
	if cfg.setY {
		yLabel = cfg.yLabel
	}

	// Build every line first so that bad input is reported before drawing
	// and shared axis ranges are known.
	var pal, chainPal colours
	chains := 0
	lines := make(map[string][]*plotter.Line, len(names))
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, name := range names {
		if len(series[name]) == 0 {
			return 0, fmt.Errorf("%w: RunningEstimates: proposal %q has no chains", ErrEmpty, name)
		}
		col := pal.of(name)
		chains = max(chains, len(series[name]))
		for c, chain := range series[name] {
			// Thin the finite points, not the indices, so that a NaN at a
			// picked index cannot leave a hole or an empty line.
			finite := make(plotter.XYs, 0, len(chain))
			for i, v := range chain {
				if scalar.Finite(v) {
					finite = append(finite, plotter.XY{X: float64(i + 1), Y: v})
				}
			}
			skipped += len(chain) - len(finite)
			idx := thin(len(finite), cfg.maxLine)
			xys := make(plotter.XYs, len(idx))
			for k, i := range idx {
				xys[k] = finite[i]
			}
			if len(xys) == 0 {
				return skipped, fmt.Errorf("%w: RunningEstimates: proposal %q chain %d has no finite value (length %d)", ErrEmpty, name, c, len(chain))
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return skipped, fmt.Errorf("figures: RunningEstimates: proposal %q chain %d: %w", name, c, err)
			}
			lc := col
			if cfg.byChain {
				lc = chainPal.of(chainName(c))
			}
			l.LineStyle = draw.LineStyle{Color: withAlpha(lc, 0.75), Width: vg.Points(0.9)}
			lines[name] = append(lines[name], l)
			x0, x1, y0, y1 := plotter.XYRange(xys)
			xmin, xmax = math.Min(xmin, x0), math.Max(xmax, x1)
			ymin, ymax = math.Min(ymin, y0), math.Max(ymax, y1)
		}
	}
	if !math.IsNaN(truth) {
		ymin, ymax = math.Min(ymin, truth), math.Max(ymax, truth)
	}
	truthLabel := "truth " + strconv.FormatFloat(truth, 'g', 4, 64)

	var panels []*plot.Plot
	if cfg.overlay {
		p := newPanel("", xLabel, yLabel)
		for _, name := range names {
			p.Add(asPlotters(lines[name])...)
			p.Legend.Add(name, lineThumb{draw.LineStyle{Color: pal.of(name), Width: vg.Points(2)}})
		}
		if !math.IsNaN(truth) {
			t := truthLine(truth)
			p.Add(t)
			p.Legend.Add(truthLabel, t)
		}
		panels = append(panels, p)
	} else {
		for _, name := range names {
			p := newPanel(name, xLabel, yLabel)
			p.Add(asPlotters(lines[name])...)
			if !math.IsNaN(truth) {
				t := truthLine(truth)
				p.Add(t)
				p.Legend.Add(truthLabel, t)
			}
			panels = append(panels, p)
		}
	}
	cols := cfg.columns
	if cols == 0 {
		cols = 1
	}
	panelH := 2.4 * vg.Inch
	if len(panels) == 1 {
		panelH = 3.6 * vg.Inch
	}
	if r := cfg.yRange; r[1] > r[0] {
		ymin, ymax = r[0], r[1]
	}
	if cfg.byChain {
		// Every panel keeps the key's band, so that the panels share one
		// scale; the first one shows the key.
		ymax += (ymax - ymin) * keyBand(panelH-0.9*vg.Inch)
		key := newKeyRow(panels[0])
		for c := range chains {
			key.add(chainName(c), lineThumb{draw.LineStyle{Color: chainPal.of(chainName(c)), Width: vg.Points(2)}})
		}
		panels[0].Add(key)
	}
	for k, p := range panels {
		if k+cols < len(panels) {
			p.X.Label.Text = "" // a panel below carries the shared x label
		}
		p.X.Min, p.X.Max = xmin, xmax
		p.Y.Min, p.Y.Max = ymin, ymax
	}
	layout := layoutGrid(panels, cols)
	return skipped, save(path, cfg, title, layout, 6.5*vg.Inch, panelH)
}

// ordered returns the keys of series in the requested order followed by the
// remaining keys sorted, so that output never depends on map iteration.
func ordered(series map[string][][]float64, order []string) ([]string, error) {
	seen := make(map[string]bool, len(series))
	names := make([]string, 0, len(series))
	for _, n := range order {
		if _, ok := series[n]; !ok {
			return nil, fmt.Errorf("figures: WithOrder names %q, which is not in the data", n)
		}
		if seen[n] {
			return nil, fmt.Errorf("figures: WithOrder names %q twice", n)
		}
		seen[n] = true
		names = append(names, n)
	}
	var rest []string
	for n := range series {
		if n == "" {
			return nil, fmt.Errorf("figures: empty proposal name")
		}
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...), nil
}

func asPlotters(ls []*plotter.Line) []plot.Plotter {
	out := make([]plot.Plotter, len(ls))
	for i, l := range ls {
		out[i] = l
	}
	return out
}

// layoutGrid arranges panels row-major on a grid with cols columns, padding
// the last row with nil cells.
func layoutGrid(panels []*plot.Plot, cols int) [][]*plot.Plot {
	rows, cols := grid(len(panels), cols)
	out := make([][]*plot.Plot, rows)
	for r := range out {
		out[r] = make([]*plot.Plot, cols)
		for c := range out[r] {
			if k := r*cols + c; k < len(panels) {
				out[r][c] = panels[k]
			}
		}
	}
	return out
}
