package figures

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestIsolines checks marching squares on z = x² + y², whose level sets are
// circles: one closed polyline per level, every vertex on the circle up to
// the interpolation error of a grid cell.
func TestIsolines(t *testing.T) {
	const n = 61
	g := &densityGrid{xs: make([]float64, n), ys: make([]float64, n), z: make([]float64, n*n)}
	floats.Span(g.xs, -2, 2)
	floats.Span(g.ys, -2, 2)
	for r, y := range g.ys {
		for c, x := range g.xs {
			g.z[r*n+c] = x*x + y*y
		}
	}
	h := g.xs[1] - g.xs[0]
	for _, radius := range []float64{0.5, 1, 1.7} {
		lines := isolines(g, radius*radius)
		if len(lines) != 1 {
			t.Fatalf("r=%v: %d polylines, want 1", radius, len(lines))
		}
		poly := lines[0]
		if first, last := poly[0], poly[len(poly)-1]; first != last {
			t.Errorf("r=%v: not closed: %v … %v", radius, first, last)
		}
		// Linear interpolation of x² along an edge of length h errs by at
		// most h²/4 in z, i.e. h²/(8r) in radius.
		tol := h * h / (8 * radius) * 1.01
		for _, p := range poly {
			if d := math.Abs(math.Hypot(p.X, p.Y) - radius); d > tol {
				t.Fatalf("r=%v: vertex %v is %.3g off the circle (tol %.3g)", radius, p, d, tol)
			}
		}
		// The polygon's perimeter approaches the circle's.
		var perim float64
		for i := 1; i < len(poly); i++ {
			perim += math.Hypot(poly[i].X-poly[i-1].X, poly[i].Y-poly[i-1].Y)
		}
		if want := 2 * math.Pi * radius; math.Abs(perim/want-1) > 0.01 {
			t.Errorf("r=%v: perimeter %v, want ≈ %v", radius, perim, want)
		}
	}
	// A level cut by the grid boundary gives open polylines; one outside
	// the range gives none.
	if lines := isolines(g, 5); len(lines) != 4 {
		t.Errorf("level 5: %d polylines, want 4 (one per corner)", len(lines))
	}
	if lines := isolines(g, 100); len(lines) != 0 {
		t.Errorf("level 100: %d polylines, want 0", len(lines))
	}
}
