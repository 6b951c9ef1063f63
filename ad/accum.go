package ad

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Gradients of slices.
//
// gorgonia.Grad differentiates y = x[s] into sliceIncrOp(x, ∂y): a tensor
// of x's shape that is zero except for ∂y at the positions s. When x is
// sliced many times (x[0], x[1], … in an unrolled recursion), Grad sums
// those full-length tensors with a chain of Adds. Lowered node by node, a
// model that takes T scalar elements of a length-T vector would pay O(T²)
// per gradient: T zero-filled buffers and T−1 full-length additions.
//
// The compiler instead recognises each such sum — a tree of same-size Adds
// whose intermediate results nothing else reads, with at least one slice
// gradient among its leaves — and emits one accumulation instruction into a
// single buffer: the full-length terms are added, and each slice gradient is
// scattered into its positions only. The cost is one pass over the buffer
// plus the total size of the slices. Terms are added in the order of the Add
// tree, which for gorgonia's left-folded sums (ReduceAdd) is the order the
// TapeMachine adds them in.

// scatterRun adds n elements of a slice gradient into the accumulation
// buffer: out[at+i·outStride] += in[src+i·srcStride] for i < n.
type scatterRun struct {
	at, outStride, src, srcStride, n int
}

// accumTerm is one term of an accumulation instruction: a full-size tensor
// (runs nil) or a slice gradient scattered by its runs.
type accumTerm struct {
	runs []scatterRun
}

// accumPlan is the lowering of one accumulation tree, fixed before any node
// is lowered: its terms in addition order.
type accumPlan struct {
	terms []*gorgonia.Node
	runs  [][]scatterRun // parallel to terms; nil for a full-size term
}

// planAccumulations finds the accumulation trees among the needed nodes.
// Interior nodes of a tree (absorbed) get neither a buffer nor an
// instruction; the tree's root gets one accumulation instruction. pinned
// nodes (the output, the gradients, WithOutputs nodes) are read by the
// Program and are never absorbed.
func (b *builder) planAccumulations(order []*gorgonia.Node, pinned map[*gorgonia.Node]bool) {
	uses := make(map[*gorgonia.Node]int)
	consumer := make(map[*gorgonia.Node]*gorgonia.Node)
	for _, nd := range order {
		if nd.Op() == nil {
			continue
		}
		for _, c := range children(b.g, nd) {
			uses[c]++
			consumer[c] = nd
		}
	}

	isAdd := make(map[*gorgonia.Node]bool)
	scatter := make(map[*gorgonia.Node][]scatterRun)
	for _, nd := range order {
		if nd.Op() == nil {
			continue
		}
		switch {
		case isSameSizeAdd(b.g, nd):
			isAdd[nd] = true
		case opType(nd.Op()) == "sliceIncrOp" && nd.Dtype() == tensor.Float64:
			if runs, ok := sliceIncrRuns(b.g, nd); ok {
				scatter[nd] = runs
			}
		}
	}

	// A candidate is absorbed into its only reader when that reader is a
	// same-size Add.
	absorbedBy := func(nd *gorgonia.Node) bool {
		if pinned[nd] || uses[nd] != 1 {
			return false
		}
		p := consumer[nd]
		return isAdd[p] && size(p.Shape()) == size(nd.Shape())
	}

	for _, nd := range order {
		if !isAdd[nd] && scatter[nd] == nil {
			continue
		}
		if absorbedBy(nd) {
			continue // part of a larger tree, planned from its root
		}
		plan := &accumPlan{}
		var interior []*gorgonia.Node
		hasScatter := false
		var walk func(n *gorgonia.Node, root bool)
		walk = func(n *gorgonia.Node, root bool) {
			if !root && !((isAdd[n] || scatter[n] != nil) && absorbedBy(n)) {
				plan.terms = append(plan.terms, n) // computed elsewhere: a full term
				plan.runs = append(plan.runs, nil)
				return
			}
			if !root {
				interior = append(interior, n)
			}
			if runs := scatter[n]; runs != nil {
				hasScatter = true
				cs := children(b.g, n)
				plan.terms = append(plan.terms, cs[1])
				plan.runs = append(plan.runs, runs)
				return
			}
			for _, c := range children(b.g, n) {
				walk(c, false)
			}
		}
		walk(nd, true)
		if !hasScatter {
			continue // a plain sum: lowered Add by Add as before
		}
		b.accum[nd] = plan
		for _, n := range interior {
			b.absorbed[n] = true
		}
	}
}

// isSameSizeAdd reports whether nd is gorgonia's elementwise + of two
// float64 operands of nd's size.
func isSameSizeAdd(g *gorgonia.ExprGraph, nd *gorgonia.Node) bool {
	op := nd.Op()
	if op == nil || opType(op) != "elemBinOp" || nd.Dtype() != tensor.Float64 {
		return false
	}
	if sym, _, _ := strings.Cut(fmt.Sprint(op), " "); sym != "+" {
		return false
	}
	cs := children(g, nd)
	if len(cs) != 2 {
		return false
	}
	n := size(nd.Shape())
	for _, c := range cs {
		if c.Dtype() != tensor.Float64 || size(c.Shape()) != n {
			return false
		}
	}
	return true
}

// sliceIncrRuns finds where sliceIncrOp(x, incr) puts each element of incr,
// by running the op's own Do once with incr holding positions 1, 2, … and x
// zero, and compresses the map into strided runs.
func sliceIncrRuns(g *gorgonia.ExprGraph, nd *gorgonia.Node) ([]scatterRun, bool) {
	cs := children(g, nd)
	if len(cs) != 2 || cs[1].Dtype() != tensor.Float64 {
		return nil, false
	}
	n, m := size(nd.Shape()), size(cs[1].Shape())
	if size(cs[0].Shape()) != n || m >= 1<<31 {
		return nil, false
	}
	ids := make([]float64, m)
	for j := range ids {
		ids[j] = float64(j + 1)
	}
	res, err := doOp(nd.Op(), []gorgonia.Value{zeroValue(cs[0]), makeValue(cs[1], ids)})
	if err != nil {
		return nil, false
	}
	got, err := valueData(res, n)
	if err != nil {
		return nil, false
	}
	type pair struct{ out, src int }
	var pairs []pair
	for j, v := range got {
		if v == 0 {
			continue
		}
		if v != math.Trunc(v) || v < 1 || v > float64(m) {
			return nil, false // not a pure scatter
		}
		pairs = append(pairs, pair{j, int(v) - 1})
	}
	// Ordered by source, a slice's positions form few runs of constant
	// stride: one for a contiguous block or a column.
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].src < pairs[j].src })
	var runs []scatterRun
	for k := 0; k < len(pairs); {
		r := scatterRun{at: pairs[k].out, outStride: 1, src: pairs[k].src, srcStride: 1, n: 1}
		if k+1 < len(pairs) {
			r.outStride = pairs[k+1].out - pairs[k].out
			r.srcStride = pairs[k+1].src - pairs[k].src
			e := k + 1
			for e < len(pairs) && pairs[e].out-pairs[e-1].out == r.outStride && pairs[e].src-pairs[e-1].src == r.srcStride {
				e++
			}
			r.n = e - k
		}
		if r.n == 1 {
			r.outStride, r.srcStride = 1, 1
		}
		runs = append(runs, r)
		k += r.n
	}
	return runs, true
}

// lowerAccum emits the accumulation instruction of a planned tree rooted at
// nd.
func (b *builder) lowerAccum(nd *gorgonia.Node, plan *accumPlan) error {
	args := make([]int, len(plan.terms))
	terms := make([]accumTerm, len(plan.terms))
	for i, t := range plan.terms {
		s, ok := b.slot[t]
		if !ok {
			return fmt.Errorf("ad: internal error: term %q of the sum %q not lowered", t.Name(), nd.Name())
		}
		args[i] = s
		terms[i] = accumTerm{runs: plan.runs[i]}
	}
	s := b.newSlot(nd, size(nd.Shape()))
	b.emit(nd, instr{kind: kAccum, out: s, args: args, terms: terms,
		name: fmt.Sprintf("sum of %d gradient terms", len(terms))})
	return nil
}

// accumulate executes an accumulation instruction: out is the sum of its
// terms, the first one initialising it.
func accumulate(out []float64, s [][]float64, ins *instr) {
	for k := range ins.terms {
		in := s[ins.args[k]]
		runs := ins.terms[k].runs
		if runs == nil {
			if k == 0 {
				copy(out, in)
				continue
			}
			in = in[:len(out)]
			for i, v := range in {
				out[i] += v
			}
			continue
		}
		if k == 0 {
			clear(out)
		}
		for _, r := range runs {
			if r.outStride == 1 && r.srcStride == 1 {
				dst, src := out[r.at:r.at+r.n], in[r.src:r.src+r.n]
				for i, v := range src {
					dst[i] += v
				}
				continue
			}
			o, j := r.at, r.src
			for i := 0; i < r.n; i++ {
				out[o] += in[j]
				o += r.outStride
				j += r.srcStride
			}
		}
	}
}
