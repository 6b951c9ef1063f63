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
//
// Which instructions read and write a slot's memory is indexed once (see
// useIndex) and updated at each rewrite, so the pass is near-linear in the
// length of list; a scan of list per sum made it quadratic (seconds for
// the unrolled recursions of posteriordb's HMMs).
func (c *code) accumulateProducts(list []instr, liveOut []int) []instr {
	u := newUseIndex(c, list, liveOut)
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
			u.moveWriter(w, wi.out, add.out)
			wi.out = add.out
			// The product moves to the sum's place, after the addend's
			// writer; nothing between reads its output or writes its
			// operands, which are earlier instructions' results.
			prod := *gi
			prod.out, prod.acc = add.out, true
			prod.args = append(append([]int(nil), gi.args...), add.out)
			u.replaceArgs(i, add.args, prod.args)
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

// useIndex answers which instructions of an entry point's list read and
// write a slot's memory, from per-slot lists of readers and writers and a
// memo of the slots whose memory overlaps each slot's (found through
// blocks of the arena), rather than by scanning the list. Its answers are
// those of a scan of the list as accumulateProducts leaves it, the
// instructions it drops included.
type useIndex struct {
	c         *code
	liveOut   []int     // slots the entry point reads after running list
	readersOf [][]int32 // per slot: the instructions with it among their arguments
	writersOf [][]int32 // per slot: the instructions writing it
	blocks    map[int][]int
	near      map[int][]int // memo of overlapping(t)
	stamp     []uint32      // per instruction: the query that last counted it
	query     uint32
}

// useBlock is the width of the arena blocks through which overlapping
// slots are found.
const useBlock = 64

func newUseIndex(c *code, list []instr, liveOut []int) *useIndex {
	ns := len(c.slotLen)
	u := &useIndex{c: c, liveOut: liveOut, readersOf: make([][]int32, ns), writersOf: make([][]int32, ns),
		blocks: make(map[int][]int), near: make(map[int][]int), stamp: make([]uint32, len(list))}
	for i := range list {
		u.addReader(int32(i), list[i].args)
		u.writersOf[list[i].out] = append(u.writersOf[list[i].out], int32(i))
	}
	for t := range ns {
		if !u.plain(t) {
			continue
		}
		for k := c.slotOff[t] / useBlock; k <= (c.slotOff[t]+c.slotLen[t]-1)/useBlock; k++ {
			u.blocks[k] = append(u.blocks[k], t)
		}
	}
	return u
}

// plain reports whether slot t is arena memory that other slots may
// overlap (not shared data, not empty): overlaps compares the others by
// identity.
func (u *useIndex) plain(t int) bool {
	_, shared := u.c.shared[t]
	return !shared && u.c.slotLen[t] > 0
}

// addReader records instruction i as a reader of each of args, once.
func (u *useIndex) addReader(i int32, args []int) {
	for k, a := range args {
		if !slicesContains(args[:k], a) {
			u.readersOf[a] = append(u.readersOf[a], i)
		}
	}
}

// replaceArgs updates the index for instruction i's arguments changing
// from old to args.
func (u *useIndex) replaceArgs(i int, old, args []int) {
	for k, a := range old {
		if !slicesContains(old[:k], a) {
			u.readersOf[a] = removeOne(u.readersOf[a], int32(i))
		}
	}
	u.addReader(int32(i), args)
}

// moveWriter updates the index for instruction i writing to instead of
// from.
func (u *useIndex) moveWriter(i, from, to int) {
	u.writersOf[from] = removeOne(u.writersOf[from], int32(i))
	u.writersOf[to] = append(u.writersOf[to], int32(i))
}

// overlapping lists the slots whose memory overlaps slot t's, t included.
func (u *useIndex) overlapping(t int) []int {
	if !u.plain(t) {
		return []int{t}
	}
	if s, ok := u.near[t]; ok {
		return s
	}
	var s []int
	c := u.c
	lo := c.slotOff[t] / useBlock
	for k := lo; k <= (c.slotOff[t]+c.slotLen[t]-1)/useBlock; k++ {
		for _, v := range u.blocks[k] {
			// A slot spanning several blocks is met once per block;
			// count it in the first block both share.
			if max(lo, c.slotOff[v]/useBlock) == k && c.overlaps(t, v) {
				s = append(s, v)
			}
		}
	}
	u.near[t] = s
	return s
}

// readers counts the instructions reading slot t's memory, and the entry
// point as one more.
func (u *useIndex) readers(t int) int {
	u.query++
	k := 0
	for _, s := range u.overlapping(t) {
		for _, i := range u.readersOf[s] {
			if u.stamp[i] != u.query {
				u.stamp[i] = u.query
				k++
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
func (u *useIndex) writer(t int) int {
	w := -1
	for _, s := range u.overlapping(t) {
		for _, i := range u.writersOf[s] {
			if w >= 0 && int(i) != w {
				return -1
			}
			w = int(i)
		}
	}
	return w
}

// slicesContains reports whether v is among s.
func slicesContains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// removeOne removes one occurrence of v from s.
func removeOne(s []int32, v int32) []int32 {
	for k, x := range s {
		if x == v {
			return append(s[:k], s[k+1:]...)
		}
	}
	return s
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
