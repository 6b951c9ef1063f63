package figures

import (
	"errors"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Settings of the background density contours of Scatter.
const (
	contourGrid   = 80   // grid points per axis
	contourPoints = 2000 // background points used by the density estimate
)

// contourMass are the probability masses enclosed by the drawn contours
// (highest-density regions), lowest density first.
var contourMass = []float64{0.99, 0.9, 0.5}

// densityGrid is a function sampled on a regular grid.
type densityGrid struct {
	xs, ys []float64
	z      []float64 // z[r*len(xs)+c] is the value at (xs[c], ys[r])
}

var errDegenerate = errors.New("background has too few distinct points or a singular covariance")

// gaussianKDE2 is a bivariate Gaussian kernel density estimate with Scott's
// bandwidth matrix H = n^(-1/3)·Σ̂ (the full covariance, so elongated and
// correlated clouds get matching kernels).
type gaussianKDE2 struct {
	xs, ys        []float64
	i11, i12, i22 float64 // H⁻¹
	sx, sy        float64 // kernel standard deviations along x and y
	norm          float64
}

func newGaussianKDE2(xys plotter.XYs) (*gaussianKDE2, error) {
	n := len(xys)
	if n < 3 {
		return nil, errDegenerate
	}
	k := &gaussianKDE2{xs: make([]float64, n), ys: make([]float64, n)}
	for i, p := range xys {
		k.xs[i], k.ys[i] = p.X, p.Y
	}
	s := math.Pow(float64(n), -1.0/3)
	h11 := s * stat.Variance(k.xs, nil)
	h22 := s * stat.Variance(k.ys, nil)
	h12 := s * stat.Covariance(k.xs, k.ys, nil)
	det := h11*h22 - h12*h12
	// A relative threshold: collinear points give det ≈ 0 up to rounding.
	if !(det > 1e-12*h11*h22) {
		return nil, errDegenerate
	}
	k.i11, k.i12, k.i22 = h22/det, -h12/det, h11/det
	k.sx, k.sy = math.Sqrt(h11), math.Sqrt(h22)
	k.norm = 1 / (float64(n) * 2 * math.Pi * math.Sqrt(det))
	return k, nil
}

func (k *gaussianKDE2) at(x, y float64) float64 {
	var s float64
	for i := range k.xs {
		dx, dy := x-k.xs[i], y-k.ys[i]
		// Beyond 8 kernel standard deviations a term is below e⁻³² of the
		// kernel's peak: skipping the exponential is most of the speed.
		if q := k.i11*dx*dx + 2*k.i12*dx*dy + k.i22*dy*dy; q < 64 {
			s += math.Exp(-0.5 * q)
		}
	}
	return s * k.norm
}

// densityContours returns contour lines of the density of xys enclosing
// contourMass of it. The levels are the (1−mass) quantiles of the estimated
// density at the points themselves, the usual sample-based highest-density
// region rule.
func densityContours(xys plotter.XYs) (*contourLines, error) {
	if len(xys) > contourPoints {
		stride := (len(xys) + contourPoints - 1) / contourPoints
		thinned := make(plotter.XYs, 0, contourPoints)
		for i := 0; i < len(xys); i += stride {
			thinned = append(thinned, xys[i])
		}
		xys = thinned
	}
	k, err := newGaussianKDE2(xys)
	if err != nil {
		return nil, err
	}
	at := make([]float64, len(xys))
	for i, p := range xys {
		at[i] = k.at(p.X, p.Y)
	}
	sort.Float64s(at)
	levels := make([]float64, len(contourMass))
	for i, m := range contourMass {
		levels[i] = stat.Quantile(1-m, stat.Empirical, at, nil)
	}
	xmin, xmax, ymin, ymax := plotter.XYRange(xys)
	g := &densityGrid{xs: make([]float64, contourGrid), ys: make([]float64, contourGrid), z: make([]float64, contourGrid*contourGrid)}
	// Two kernel widths of margin close the outer contours; the lines are
	// clipped to the axes, which the points alone decide.
	floats.Span(g.xs, xmin-2*k.sx, xmax+2*k.sx)
	floats.Span(g.ys, ymin-2*k.sy, ymax+2*k.sy)
	for r, y := range g.ys {
		for c, x := range g.xs {
			g.z[r*contourGrid+c] = k.at(x, y)
		}
	}
	ct := &contourLines{levels: levels, styles: make([]draw.LineStyle, len(levels))}
	for i, lv := range levels {
		ct.styles[i] = contourStyle(i)
		ct.lines = append(ct.lines, isolines(g, lv))
	}
	return ct, nil
}

// contourStyle is the line style of the i-th contour level: darker and
// thicker towards the mode.
func contourStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: color.Gray{Y: uint8(90 - 30*i)}, Width: vg.Points(0.7 + 0.35*float64(i))}
}

// lineThumb is a legend thumbnail showing a line.
type lineThumb struct{ draw.LineStyle }

// Thumbnail implements plot.Thumbnailer.
func (l lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.LineStyle, c.Min.X, y, c.Max.X, y)
}

// contourLines is a plot.Plotter drawing precomputed isolines. It replaces
// plotter.Contour, whose path order depends on map iteration and so makes
// SVG output differ from run to run.
type contourLines struct {
	levels []float64
	styles []draw.LineStyle
	lines  [][][]Point // lines[i] are the polylines at levels[i]
}

// Plot implements plot.Plotter.
func (cl *contourLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, polys := range cl.lines {
		for _, poly := range polys {
			pts := make([]vg.Point, len(poly))
			for j, q := range poly {
				pts[j] = vg.Point{X: trX(q.X), Y: trY(q.Y)}
			}
			c.StrokeLines(cl.styles[i], c.ClipLinesXY(pts)...)
		}
	}
}

// isolines returns the polylines where the grid function crosses level, by
// marching squares with linear interpolation along cell edges; saddle cells
// are resolved by the mean of their corners. Closed curves end where they
// start. The output order follows the grid, so it is deterministic.
func isolines(g *densityGrid, level float64) [][]Point {
	nc, nr := len(g.xs), len(g.ys)
	if nc < 2 || nr < 2 {
		return nil
	}
	at := func(c, r int) float64 { return g.z[r*nc+c] }
	// Edges are numbered 2·(r·nc+c) for the horizontal edge from (c, r) to
	// (c+1, r) and 2·(r·nc+c)+1 for the vertical edge from (c, r) to (c, r+1).
	hEdge := func(c, r int) int { return 2 * (r*nc + c) }
	vEdge := func(c, r int) int { return 2*(r*nc+c) + 1 }
	cross := func(e int) Point {
		k, vertical := e/2, e%2 == 1
		c, r := k%nc, k/nc
		a := at(c, r)
		if vertical {
			b := at(c, r+1)
			t := (level - a) / (b - a)
			return Point{X: g.xs[c], Y: g.ys[r] + t*(g.ys[r+1]-g.ys[r])}
		}
		b := at(c+1, r)
		t := (level - a) / (b - a)
		return Point{X: g.xs[c] + t*(g.xs[c+1]-g.xs[c]), Y: g.ys[r]}
	}

	type segment struct{ a, b int } // the two crossed edges
	var segs []segment
	for r := 0; r < nr-1; r++ {
		for c := 0; c < nc-1; c++ {
			v := [4]float64{at(c, r), at(c+1, r), at(c+1, r+1), at(c, r+1)}
			var hi [4]bool
			for i := range v {
				hi[i] = v[i] >= level
			}
			// Cell edges, counter-clockwise from the bottom; edge i joins
			// corners i and i+1.
			e := [4]int{hEdge(c, r), vEdge(c+1, r), hEdge(c, r+1), vEdge(c, r)}
			var crossed []int
			for i := range 4 {
				if hi[i] != hi[(i+1)%4] {
					crossed = append(crossed, i)
				}
			}
			switch len(crossed) {
			case 2:
				segs = append(segs, segment{e[crossed[0]], e[crossed[1]]})
			case 4:
				// Saddle: the centre decides which diagonal is connected.
				centreHi := (v[0]+v[1]+v[2]+v[3])/4 >= level
				if centreHi == hi[0] {
					// Corners 0 and 2 are joined through the centre: cut off
					// corners 1 and 3.
					segs = append(segs, segment{e[0], e[1]}, segment{e[2], e[3]})
				} else {
					segs = append(segs, segment{e[3], e[0]}, segment{e[1], e[2]})
				}
			}
		}
	}

	// Chain segments sharing an edge into polylines. Every edge borders at
	// most two cells, so it is in at most two segments.
	byEdge := make(map[int][]int, 2*len(segs))
	for i, s := range segs {
		byEdge[s.a] = append(byEdge[s.a], i)
		byEdge[s.b] = append(byEdge[s.b], i)
	}
	used := make([]bool, len(segs))
	next := func(edge, from int) int {
		for _, j := range byEdge[edge] {
			if j != from && !used[j] {
				return j
			}
		}
		return -1
	}
	// walk follows unused segments from edge, leaving segment from.
	walk := func(edge, from int) []int {
		var edges []int
		for j := next(edge, from); j >= 0; j = next(edge, j) {
			used[j] = true
			if segs[j].a == edge {
				edge = segs[j].b
			} else {
				edge = segs[j].a
			}
			edges = append(edges, edge)
		}
		return edges
	}
	var out [][]Point
	for i, s := range segs {
		if used[i] {
			continue
		}
		used[i] = true
		fwd := walk(s.b, i)
		back := walk(s.a, i)
		edges := make([]int, 0, len(back)+2+len(fwd))
		for k := len(back) - 1; k >= 0; k-- {
			edges = append(edges, back[k])
		}
		edges = append(edges, s.a, s.b)
		edges = append(edges, fwd...)
		poly := make([]Point, len(edges))
		for k, e := range edges {
			poly[k] = cross(e)
		}
		out = append(out, poly)
	}
	return out
}
