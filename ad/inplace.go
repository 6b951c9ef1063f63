package ad

import (
	"fmt"
	"math"
)

// inplace is a Program's state for LogDensityGradInPlace: which slots move
// when the wrt values and the gradient live in the caller's slices.
type inplace struct {
	ok bool // false: some buffer cannot move; copy instead
	// moves lists, per wrt node then per gradient, the slots whose arena
	// range lies in that node's buffer, with their offsets in it.
	wrtMoves, gradMoves [][]slotMove
	// flat is the same moves with offsets into x (grad false) or grad,
	// the list bindInplace runs.
	flat []flatMove
	x, g *float64 // first elements of the caller's slices currently bound
}

type slotMove struct{ slot, off int }

type flatMove struct {
	slot, lo, hi int
	grad         bool
}

// planInplace decides whether the wrt and gradient buffers can be replaced
// by views of the caller's slices: every slot overlapping one of them must
// lie inside it, and every gradient must be written in full by an
// instruction of the gradient program (not a constant folded at compile
// time).
func (p *Program) planInplace() *inplace {
	c := p.code
	st := &inplace{ok: true}
	moves := func(s int) []slotMove {
		lo, hi := c.slotOff[s], c.slotOff[s]+c.slotLen[s]
		var ms []slotMove
		for t, off := range c.slotOff {
			if _, sh := c.shared[t]; sh {
				continue // the caller's array, not the arena
			}
			end := off + c.slotLen[t]
			if end <= lo || off >= hi || c.slotLen[t] == 0 {
				continue
			}
			if off < lo || end > hi {
				st.ok = false
			}
			ms = append(ms, slotMove{t, off - lo})
		}
		return ms
	}
	written := make(map[int]bool)
	var outs []int
	for i := range c.full {
		ins := &c.full[i]
		if ins.kind == kFused {
			outs = fusedOuts(outs, ins)
		} else {
			outs = append(outs, ins.out)
		}
	}
	for _, s := range outs {
		written[c.slotOff[s]] = true
	}
	for _, s := range c.wrt {
		st.wrtMoves = append(st.wrtMoves, moves(s))
	}
	for _, s := range c.gradSlots {
		st.gradMoves = append(st.gradMoves, moves(s))
		if !written[c.slotOff[s]] {
			st.ok = false
		}
	}
	flatten := func(moves [][]slotMove, slots []int, grad bool) {
		at := 0
		for i, s := range slots {
			for _, m := range moves[i] {
				lo := at + m.off
				st.flat = append(st.flat, flatMove{slot: m.slot, lo: lo, hi: lo + c.slotLen[m.slot], grad: grad})
			}
			at += c.slotLen[s]
		}
	}
	flatten(st.wrtMoves, c.wrt, false)
	flatten(st.gradMoves, c.gradSlots, true)
	// Two gradients sharing a buffer, or a gradient that is a wrt node's
	// buffer, cannot both move.
	seen := make(map[int]bool)
	for _, s := range append(append([]int(nil), c.wrt...), c.gradSlots...) {
		if seen[c.slotOff[s]] && c.slotLen[s] > 0 {
			st.ok = false
		}
		seen[c.slotOff[s]] = true
	}
	return st
}

// LogDensityGradInPlace is LogDensityGrad without copying x into the
// program or the gradient out of it: while it runs, the program reads the
// wrt values from x and its kernels write the gradient straight into grad.
// For programs with many parameters (a flow's network) this saves two
// passes over them per call. Unlike LogDensityGrad it does not check the
// gradient for non-finite values, only the log-density; and x and grad must
// not overlap. Programs whose buffers cannot be used in place (a gradient
// folded into a constant, say) fall back to copying, with the same
// results.
func (p *Program) LogDensityGradInPlace(x, grad []float64) (float64, error) {
	if p.code.outSlot < 0 {
		return math.NaN(), errNoOutput
	}
	if len(x) != p.code.dim || len(grad) != p.code.dim {
		return math.NaN(), fmt.Errorf("ad: input of length %d and gradient of length %d, want %d", len(x), len(grad), p.code.dim)
	}
	if err := p.acquire(); err != nil {
		return math.NaN(), err
	}
	if p.inplace == nil {
		p.inplace = p.planInplace()
	}
	st := p.inplace
	if !st.ok || p.code.dim == 0 {
		p.release()
		return p.LogDensityGrad(x, grad)
	}
	defer p.release()
	if &x[0] != st.x || &grad[0] != st.g {
		p.bindInplace(x, grad)
	}
	if err := p.exec(p.code.full); err != nil {
		return math.NaN(), err
	}
	v := p.slots[p.code.outSlot][0]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v, fmt.Errorf("%w: log-density is %v", ErrNonFinite, v)
	}
	return v, nil
}

// bindInplace points the wrt and gradient slots (and the kernel arguments
// using them) into x and grad. It returns true, for use in conditions.
func (p *Program) bindInplace(x, grad []float64) bool {
	st := p.inplace
	for _, m := range st.flat {
		b := x
		if m.grad {
			b = grad
		}
		p.slots[m.slot] = b[m.lo:m.hi:m.hi]
	}
	for i, args := range p.code.kernArgs {
		for j, s := range args {
			p.kin[i][j] = p.slots[s]
		}
	}
	st.x, st.g = &x[0], &grad[0]
	return true
}

// unbindInplace points every slot back into the program's own arena, for
// the copying entry points.
func (p *Program) unbindInplace() {
	if p.inplace == nil || p.inplace.x == nil {
		return
	}
	c := p.code
	for i := range c.slotOff {
		p.slots[i] = p.slotView(i)
	}
	for i, args := range c.kernArgs {
		for j, s := range args {
			p.kin[i][j] = p.slots[s]
		}
	}
	p.inplace.x, p.inplace.g = nil, nil
}
