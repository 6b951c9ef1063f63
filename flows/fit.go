package flows

import (
	"context"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/internal/training"
)

// FitRQMA trains an RQMA flow on the rows of x (samples of a distribution on
// R^n) by maximum likelihood. The standardisation uses the weighted sample
// means and reciprocal standard deviations of all rows; the network is
// initialised from opts.Seed. Cancelling ctx stops training between Adam
// steps: FitRQMA then returns the flow as far as it got, the report and an
// error wrapping ctx's.
func FitRQMA(ctx context.Context, x [][]float64, cfg RQMAConfig, opts TrainOptions) (*RQMA, *TrainReport, error) {
	if _, err := training.CheckRows(x); err != nil {
		return nil, nil, err
	}
	if err := opts.validate(len(x)); err != nil {
		return nil, nil, err
	}
	shift, scale, err := training.Standardisation(x, opts.Weights, nil)
	if err != nil {
		return nil, nil, err
	}
	f, err := NewRQMA(shift, scale, cfg, opts.Seed)
	if err != nil {
		return nil, nil, err
	}
	rep, err := f.train(ctx, x, opts)
	return f, rep, err
}

// train fits the network of f, keeping its standardisation.
func (f *RQMA) train(ctx context.Context, x [][]float64, opts TrainOptions) (*TrainReport, error) {
	l := newGraphLearner(&rqmaBatch{f: f, x: x}, f.params, f.net.freeSpans(0))
	return train(ctx, l, len(x), opts.Weights, opts)
}

// rqmaBatch is the log-density of an RQMA on a batch of samples x[idx]:
// the standardisation, the sigmoid, the stack and the logit as one graph.
type rqmaBatch struct {
	f *RQMA
	x [][]float64
}

func (r *rqmaBatch) numParams() int { return len(r.f.params) }

func (r *rqmaBatch) build(b *gb, rows int) (*gorgonia.Node, []*gorgonia.Node) {
	f := r.f
	n := f.net.n
	// The standardisation is data filled with every batch (as the
	// conditional flow's), so that the compiled loss depends only on the
	// architecture and a TrainCache can hand it to another fit.
	x := b.data("x", nil, rows, n)
	a := b.data("scale", nil, rows, n)
	off := b.data("offset", nil, rows, n)
	ldStd := b.data("ldStd", nil, rows)
	v := b.n(gorgonia.Add(b.n(gorgonia.HadamardProd(x, a)), off))
	if b.err != nil {
		return nil, nil
	}
	z, ld := f.forwardGraph(b, v, 0)
	if b.err != nil {
		return nil, nil
	}
	logq := b.n(gorgonia.Add(b.n(gorgonia.Add(ld, ldStd)), b.stdNormalRows(z)))
	return logq, []*gorgonia.Node{x, a, off, ldStd}
}

func (r *rqmaBatch) fill(idx []int, _ randSource, bufs [][]float64) {
	f := r.f
	n := f.net.n
	x, a, off, lds := bufs[0], bufs[1], bufs[2], bufs[3]
	ld := 0.0
	for i := 0; i < n; i++ {
		ld += math.Log(f.scale[i])
	}
	for k, j := range idx {
		copy(x[k*n:(k+1)*n], r.x[j])
		for i := 0; i < n; i++ {
			a[k*n+i], off[k*n+i] = f.scale[i], -f.shift[i]*f.scale[i]
		}
		lds[k] = ld
	}
}

func (r *rqmaBatch) cacheKey(rows int) any {
	return trainKey{kind: "RQMA", n: r.f.net.n, cfg: r.f.cfg, rows: rows}
}

// squashedStack adds w = h⁻¹(F(h(v))) for the rows v (ctx the context
// rows, nil without) and the per-row log-derivatives of h, F and h⁻¹.
func (b *gb) squashedStack(net *stack, c float64, v, ctx *gorgonia.Node) (w, ld0, ld1, ld2 *gorgonia.Node) {
	u, ld0 := b.squashLayer(v, c)
	if b.err != nil {
		return nil, nil, nil, nil
	}
	y, ld1 := net.graph(b, 0, u, ctx)
	if b.err != nil {
		return nil, nil, nil, nil
	}
	w, ld2 = b.logitLayer(y, c)
	return w, ld0, ld1, ld2
}

// forwardGraph adds z = h⁻¹(F(h(v))) for the standardised rows v and the
// per-row log-determinant of T, the standardisation's being ldStd.
func (f *RQMA) forwardGraph(b *gb, v *gorgonia.Node, ldStd float64) (z, ld *gorgonia.Node) {
	z, ld0, ld1, ld2 := b.squashedStack(f.net, f.c, v, nil)
	if b.err != nil {
		return nil, nil
	}
	ld = b.n(gorgonia.Add(b.n(gorgonia.Add(ld0, ld1)), ld2))
	if ldStd == 0 {
		return z, ld
	}
	return z, b.n(gorgonia.Add(ld, b.scalar(ldStd)))
}

// compileForward compiles the single-point forward map θ ↦ (T(θ),
// log|det J_T(θ)|), reading the parameters in place.
func (f *RQMA) compileForward() (*ad.Program, error) {
	n := f.net.n
	b := &gb{g: gorgonia.NewGraph(), values: f.params}
	in := gorgonia.NewMatrix(b.g, tensor.Float64, gorgonia.WithShape(1, n), gorgonia.WithName("theta"))
	a, c := make([]float64, n), make([]float64, n)
	ldStd := 0.0
	for i := range a {
		a[i], c[i] = f.scale[i], -f.shift[i]*f.scale[i]
		ldStd += math.Log(f.scale[i])
	}
	v := b.n(gorgonia.Add(b.n(gorgonia.HadamardProd(in, Constant(a, 1, n))), Constant(c, 1, n)))
	var z, ld *gorgonia.Node
	if b.err == nil {
		z, ld = f.forwardGraph(b, v, ldStd)
	}
	return b.compileMap("RQMA graph", in, z, ld)
}
