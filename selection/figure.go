package selection

import (
	"fmt"
	"math"
	"sort"

	"github.com/trjgo/trj/internal/figures"
)

// WriteFigure draws every term's posterior inclusion probability with an
// interval of ±2 MCSE (clipped to [0, 1]), highest PIP at the top, to path
// (".png" or ".svg"). ref, when given, holds reference PIPs in term order
// (for instance exact ones from enumeration) drawn as crosses beside the
// estimates. A term the chains never left (not Mixed) is drawn without an
// interval: its MCSE cannot be estimated. It works on a result read back
// with ReadResult.
func (r *Result) WriteFigure(path string, ref ...float64) error {
	if len(r.PIP) == 0 {
		return fmt.Errorf("selection: no inclusion probabilities to draw")
	}
	if len(ref) != 0 && len(ref) != len(r.PIP) {
		return fmt.Errorf("selection: %d reference PIPs for %d terms", len(ref), len(r.PIP))
	}
	order := make([]int, len(r.PIP))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return r.PIP[order[a]].P > r.PIP[order[b]].P })
	rows := make([]figures.Interval, len(order))
	for k, j := range order {
		e := r.PIP[j]
		rows[k] = figures.Interval{
			Name:  r.Names[j],
			Value: e.P,
			Low:   math.Max(0, e.P-2*e.MCSE),
			High:  math.Min(1, e.P+2*e.MCSE),
			Ref:   math.NaN(),
		}
		if len(ref) != 0 {
			rows[k].Ref = ref[j]
		}
	}
	title := fmt.Sprintf("Posterior inclusion probabilities ± 2 MCSE (%d kept steps)", r.Steps)
	return figures.Intervals(path, title, rows, figures.WithXLabel("posterior inclusion probability"))
}
