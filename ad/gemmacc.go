package ad

// Products accumulated into a sum.
//
// A gradient graph adds matrix products wherever a value is used twice
// (the gradient of B in B·Bᵀ is Ḡ·B + Ḡᵀ·B, a parameter of two layers gets
// the sum of both), and a forward graph adds a product to a term such as a
// diagonal. Before fusion, accumulateProducts rewrites out = P + X, where P
// is a matrix product (kGemm) and X the result of another instruction W,
// both read by nothing but the sum, as: W writes out instead of X, and the
// product then adds itself to out (internal/gemm with beta = 1) at the
// sum's place. The sum's pass over three buffers and two of the buffers go.
//
// The values are the same bits: gemm's element with beta 1 is
// float64(1·c) + 1·acc, that is c + acc rounded once, as P + X or X + P
// round it (addition commutes in IEEE arithmetic, signs of zero included).

import "iter"

// plainAdds yields the index and address of each instruction of list that
// is an elementwise sum of two slots: the instructions the product
// rewrites look for.
func plainAdds(list []instr) iter.Seq2[int, *instr] {
	return func(yield func(int, *instr) bool) {
		for i := range list {
			add := &list[i]
			if add.kind == kBinary && add.bop.code == fAdd && add.variant == 0 && len(add.args) == 2 && !yield(i, add) {
				return
			}
		}
	}
}

// accumulateProducts applies the rewrite to list, an entry point's
// instructions (before fusion); liveOut are the slots the entry point reads
// after running it. It returns the new list.
func (c *code) accumulateProducts(list []instr, liveOut []int) []instr {
	u := listUse{c: c, list: list, liveOut: liveOut}
	overlaps, readers, writer := c.overlaps, u.readers, u.writer
	drop := make([]bool, len(list))
	changed := false
	for i, add := range plainAdds(list) {
		n := c.slotLen[add.out]
		for side := 0; side < 2; side++ {
			p, x := add.args[side], add.args[1-side]
			if p == x || c.slotLen[p] != n || c.slotLen[x] != n || readers(p) != 1 || readers(x) != 1 {
				continue
			}
			g, w := writer(p), writer(x)
			if g < 0 || w < 0 || g > i || w > i || drop[g] || drop[w] {
				continue
			}
			gi, wi := &list[g], &list[w]
			// The product must write p itself, the addend's writer all
			// of x's memory (x itself or a reshape of it), and not be an elementwise op or a copy: fusion
			// may read through those to their sources (a product with 1
			// as its other operand, say), which out no longer equals.
			if gi.kind != kGemm || gi.acc || gi.out != p || !c.sameMemory(wi.out, x) || elementwise(wi.kind) ||
				!c.writesAll(wi) || overlaps(add.out, p) || overlaps(add.out, x) {
				continue
			}
			wi.out = add.out
			// The product moves to the sum's place, after the addend's
			// writer; nothing between reads its output or writes its
			// operands, which are earlier instructions' results.
			prod := *gi
			prod.out, prod.acc = add.out, true
			prod.args = append(append([]int(nil), gi.args...), add.out)
			*add = prod
			drop[g] = true
			changed = true
			break
		}
	}
	if !changed {
		return list
	}
	return without(list, drop)
}

// elementwise reports whether instructions of kind k may become fused ops.
func elementwise(k instrKind) bool {
	return k == kUnary || k == kBinary || k == kSumAll || k == kGather
}

// listUse answers which instructions of an entry point's list read and
// write a slot's memory.
type listUse struct {
	c       *code
	list    []instr
	liveOut []int // slots the entry point reads after running list
}

// overlaps reports whether slots t and u share memory.
func (c *code) overlaps(t, u int) bool {
	_, st := c.shared[t]
	_, su := c.shared[u]
	if st || su || c.slotLen[t] == 0 || c.slotLen[u] == 0 {
		return t == u
	}
	return c.slotOff[t] < c.slotOff[u]+c.slotLen[u] && c.slotOff[u] < c.slotOff[t]+c.slotLen[t]
}

// readers counts the instructions reading slot t's memory, and the entry
// point as one more.
func (u *listUse) readers(t int) int {
	k := 0
	for i := range u.list {
		for _, a := range u.list[i].args {
			if u.c.overlaps(a, t) {
				k++
				break
			}
		}
	}
	for _, s := range u.liveOut {
		if u.c.overlaps(s, t) {
			k++
		}
	}
	return k
}

// writer is the index of the one instruction writing slot t's memory (−1
// if none or several).
func (u *listUse) writer(t int) int {
	w := -1
	for i := range u.list {
		if u.c.overlaps(u.list[i].out, t) {
			if w >= 0 {
				return -1
			}
			w = i
		}
	}
	return w
}

// sameMemory reports whether slots t and u are the same memory: one slot,
// or a view of all of the other (a reshape).
func (c *code) sameMemory(t, u int) bool {
	if t == u {
		return true
	}
	_, st := c.shared[t]
	_, su := c.shared[u]
	return !st && !su && c.slotLen[t] > 0 && c.slotOff[t] == c.slotOff[u] && c.slotLen[t] == c.slotLen[u]
}

// without returns a new list of the instructions of list not marked in
// drop, in order.
func without(list []instr, drop []bool) []instr {
	out := list[:0:0]
	for i := range list {
		if !drop[i] {
			out = append(out, list[i])
		}
	}
	return out
}
