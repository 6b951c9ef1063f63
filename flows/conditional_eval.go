package flows

import (
	"errors"
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/internal/scalar"
)

// condProgram is a compiled single-point map of a conditional flow with the
// data nodes that select model k: the standardisation (scale and offset,
// log-determinant) and the context.
type condProgram struct {
	prog                   *ad.Program
	scale, offset, ld, ctx *gorgonia.Node
	bound                  int // the model whose data is bound, −1 for none
	boundAt                *ConditionalAt
}

// condData holds each model's standardisation for the compiled maps.
type condData struct {
	a, c, ainv, shift [][]float64 // per model, length n: forward scale, offset; inverse scale, offset
	ld                [][]float64 // per model, length 1: log-determinant of the standardisation
}

func newCondData(f *ConditionalRQMA) *condData {
	n := f.net.n
	d := &condData{}
	for k := range f.spec.Active {
		a, c, ai, sh := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		ld := 0.0
		for i, act := range f.spec.Active[k] {
			if act {
				a[i], c[i], ai[i], sh[i] = f.scale[i], -f.shift[i]*f.scale[i], 1/f.scale[i], f.shift[i]
				ld += math.Log(f.scale[i])
			} else {
				a[i], ai[i] = 1, 1
			}
		}
		d.a, d.c, d.ainv, d.shift = append(d.a, a), append(d.c, c), append(d.ainv, ai), append(d.shift, sh)
		d.ld = append(d.ld, []float64{ld})
	}
	return d
}

// compileCond compiles the forward (ξ ↦ z) or inverse (z ↦ ξ) map of f at
// one point, with the parameters read in place.
func (f *ConditionalRQMA) compileCond(inverse bool) (*condProgram, error) {
	n, c := f.net.n, f.net.ctx
	b := &gb{g: gorgonia.NewGraph(), values: f.params}
	in := gorgonia.NewMatrix(b.g, tensor.Float64, gorgonia.WithShape(1, n), gorgonia.WithName("in"))
	cp := &condProgram{bound: -1,
		scale: b.data("scale", nil, 1, n), offset: b.data("offset", nil, 1, n),
		ld: b.data("ldStd", nil, 1), ctx: b.data("context", nil, 1, c)}
	var out, ld *gorgonia.Node
	if !inverse {
		v := b.n(gorgonia.Add(b.n(gorgonia.HadamardProd(in, cp.scale)), cp.offset))
		if b.err == nil {
			out, ld = f.forwardGraph(b, v, cp.ld, cp.ctx)
		}
	} else {
		// w = b_k⁻¹(z) = mean + z ⊙ exp(ls), then y = σ(c·w) with the
		// forward logit's log-derivative at y, computed from w.
		mean, ls := f.baseGraph(b, cp.ctx)
		var w *gorgonia.Node
		if b.err == nil {
			w = b.n(gorgonia.Add(mean, b.n(gorgonia.HadamardProd(in, b.n(gorgonia.Exp(ls))))))
		}
		var y *gorgonia.Node
		if b.err == nil {
			cw := b.n(gorgonia.Mul(w, b.scalar(f.c)))
			y = b.n(gorgonia.Sigmoid(cw))
			l1 := b.n(ops.LogSigmoid(cw))
			l2 := b.n(ops.LogSigmoid(b.n(gorgonia.Neg(cw))))
			ld = b.n(gorgonia.Sub(b.n(gorgonia.Neg(b.rowSum(b.n(gorgonia.Add(l1, l2))))), b.scalar(float64(n)*math.Log(f.c))))
			ld = b.n(gorgonia.Sub(ld, b.rowSum(ls)))
		}
		if b.err == nil {
			var ldl *gorgonia.Node
			y, ldl = f.net.inverseGraph(b, y, cp.ctx)
			ld = b.n(gorgonia.Add(ld, ldl))
		}
		if b.err == nil {
			v := b.n(gorgonia.Mul(b.n(gorgonia.Sub(b.n(gorgonia.Log(y)), b.n(gorgonia.Log1p(b.n(gorgonia.Neg(y)))))), b.scalar(1/f.c)))
			cv := b.n(gorgonia.Mul(v, b.scalar(f.c)))
			lv := b.n(gorgonia.Add(b.rowSum(b.n(gorgonia.Add(b.n(ops.LogSigmoid(cv)), b.n(ops.LogSigmoid(b.n(gorgonia.Neg(cv))))))), b.scalar(float64(n)*math.Log(f.c))))
			// Here scale and offset hold the inverse standardisation.
			out = b.n(gorgonia.Add(b.n(gorgonia.HadamardProd(v, cp.scale)), cp.offset))
			ld = b.n(gorgonia.Add(b.n(gorgonia.Add(ld, lv)), cp.ld))
			ld = b.n(gorgonia.Neg(ld))
		}
	}
	prog, err := b.compileMap("conditional flow's graph", in, out, ld)
	if err != nil {
		return nil, err
	}
	cp.prog = prog
	return cp, nil
}

// run evaluates the map for model k at x into out (n values, then the
// log-determinant), binding model k's data first if needed.
func (cp *condProgram) run(d *condData, inverse bool, ctx []float64, k int, x, out []float64) error {
	if cp.bound != k {
		a, c := d.a[k], d.c[k]
		if inverse {
			a, c = d.ainv[k], d.shift[k]
		}
		for _, bd := range []struct {
			n *gorgonia.Node
			v []float64
		}{{cp.scale, a}, {cp.offset, c}, {cp.ld, d.ld[k]}, {cp.ctx, ctx}} {
			if err := cp.prog.Bind(bd.n, bd.v); err != nil {
				return err
			}
		}
		cp.bound, cp.boundAt = k, nil
	}
	return cp.prog.Outputs(x, out)
}

// runAt is run for a model given by t rather than by its index.
func (cp *condProgram) runAt(t *ConditionalAt, inverse bool, x, out []float64) error {
	if cp.boundAt != t {
		a, c := t.a, t.c
		if inverse {
			a, c = t.ainv, t.shift
		}
		for _, bd := range []struct {
			n *gorgonia.Node
			v []float64
		}{{cp.scale, a}, {cp.offset, c}, {cp.ld, t.ld}, {cp.ctx, t.context}} {
			if err := cp.prog.Bind(bd.n, bd.v); err != nil {
				return err
			}
		}
		cp.bound, cp.boundAt = -1, t
	}
	return cp.prog.Outputs(x, out)
}

// ConditionalAt is a conditional flow's transport for one model given by
// its context and activity mask, which need not be one of the models the
// flow was trained on: the flow amortised over a model space too large to
// list. Its maps use the flow's scratch space: one ConditionalAt per
// goroutine, made from the goroutine's own Clone of the flow.
type ConditionalAt struct {
	f                     *ConditionalRQMA
	context               []float64
	a, c, ainv, shift, ld []float64
}

// At returns the flow's transport T̃(·|context) for the model whose
// coordinates are those where active is true (the others are N(0, 1)
// auxiliaries), standardised like the trained models'.
func (f *ConditionalRQMA) At(context []float64, active []bool) (*ConditionalAt, error) {
	n := f.net.n
	if len(context) != f.net.ctx || len(active) != n {
		return nil, fmt.Errorf("flows: context of length %d and mask of length %d, the flow has %d and %d", len(context), len(active), f.net.ctx, n)
	}
	if !scalar.AllFinite(context) {
		return nil, errors.New("flows: non-finite context")
	}
	t := &ConditionalAt{f: f, context: append([]float64(nil), context...),
		a: make([]float64, n), c: make([]float64, n), ainv: make([]float64, n), shift: make([]float64, n), ld: make([]float64, 1)}
	for i, act := range active {
		if act {
			t.a[i], t.c[i], t.ainv[i], t.shift[i] = f.scale[i], -f.shift[i]*f.scale[i], 1/f.scale[i], f.shift[i]
			t.ld[0] += math.Log(f.scale[i])
		} else {
			t.a[i], t.ainv[i] = 1, 1
		}
	}
	return t, nil
}

// With returns t on flow g, a Clone of t's flow, for another goroutine.
func (t *ConditionalAt) With(g *ConditionalRQMA) *ConditionalAt {
	u := *t
	u.f = g
	return &u
}

// Dim is the saturated dimension.
func (t *ConditionalAt) Dim() int { return t.f.net.n }

// Forward sets z = T̃(ξ|context) and returns log|det J|.
func (t *ConditionalAt) Forward(xi, z []float64) (float64, error) {
	f := t.f
	if len(xi) != f.net.n || len(z) != f.net.n {
		return 0, fmt.Errorf("flows: %d→%d values, saturated dimension %d", len(xi), len(z), f.net.n)
	}
	return mapResult("Forward", f.fwd.runAt(t, false, xi, f.out), f.out, z)
}

// Inverse sets ξ = T̃⁻¹(z|context) and returns log|det J|.
func (t *ConditionalAt) Inverse(z, xi []float64) (float64, error) {
	f := t.f
	if len(xi) != f.net.n || len(z) != f.net.n {
		return 0, fmt.Errorf("flows: %d→%d values, saturated dimension %d", len(z), len(xi), f.net.n)
	}
	return mapResult("Inverse", f.inv.runAt(t, true, z, f.out), f.out, xi)
}

func (cp *condProgram) clone() *condProgram {
	c := *cp
	c.prog = cp.prog.Clone() // the bindings are copied with the arena
	return &c
}
