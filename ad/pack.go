package ad

import (
	"slices"
	"sort"
)

// Buffer sharing. Every node gets its own slot, a range of the arena,
// while lowering. Most of a gradient program's slots hold intermediates
// that are dead once their last reader has run (the backward pass's
// partial gradients, say), so pack lets slots whose lifetimes do not
// overlap share memory: a training loss of a small flow needs about half
// the arena, which makes compiling, cloning and the first evaluations
// (fresh memory) cheaper, and the evaluations' working set smaller.
//
// Lifetimes are taken from the final instruction lists (after fusion),
// one instruction being one step, so the ops of a fused loop never share
// memory among themselves. Two slots conflict when their lifetimes overlap
// in any of the lists (value, full, outputs). A slot may share only if
//   - it holds no state between calls: not a wrt node, data, constant,
//     shared data, gradient check, or a result an entry point reads after
//     running (the output, the gradients, the WithOutputs nodes);
//   - in every list, the first instruction touching it (or a view of it)
//     is its producer, which writes all of it; a custom kernel is trusted
//     to do so only when it says so (FullWriter), since the Kernel
//     contract lets a kernel rely on an output it leaves partly untouched
//     keeping its earlier contents.
// The other slots keep ranges of their own, laid out first, in their
// original order, so that views, in-place bindings and the folded
// constants keep their relative positions.

// fusedSlots appends every slot an op of a fused instruction may read or
// write. It names each slot field of fop: TestFusedSlotsCoverFop fails
// when fop gains a field this does not know.
func fusedSlots(dst []int, ins *instr) []int {
	for k := range ins.fz {
		op := &ins.fz[k]
		dst = append(dst, op.out, op.out2, op.a.slot, op.b.slot, op.scale.slot, op.pout, op.py.slot, op.pc.slot)
		if op.sum >= 0 {
			dst = append(dst, op.sum)
		}
	}
	return dst
}

// writesAll reports whether instruction ins, of a non-fused kind, writes
// every element of its output slot.
func (c *code) writesAll(ins *instr) bool {
	switch ins.kind {
	case kKernel:
		f, ok := c.kernels[ins.kernel].(FullWriter)
		return ok && f.WritesFullOutput()
	case kGather:
		n := c.slotLen[ins.out]
		covered := make([]bool, n)
		for _, sg := range ins.segs {
			for j := sg.at; j < sg.at+sg.n && j < n; j++ {
				covered[j] = true
			}
		}
		for _, ok := range covered {
			if !ok {
				return false
			}
		}
		return true
	case kUnary, kBinary, kSumAll, kSumIndex, kMaxIndex, kGemm, kBatchGemm, kGemv,
		kDot, kOuter, kByIndex, kByIndexGrad, kSoftmax, kSoftmaxGrad, kAccum, kFallback:
		return true
	}
	return false
}

// memOwner is the slot owning slot s's memory: s, or the slot it is a view of.
func (b *builder) memOwner(s int) int {
	if o, ok := b.viewOf[s]; ok {
		return o
	}
	return s
}

// relayout moves every slot owning memory to newOff, its views with it.
func (b *builder) relayout(newOff []int) {
	c := b.c
	offs := make([]int, len(c.slotOff))
	for s := range offs {
		if _, ok := c.shared[s]; ok {
			offs[s] = c.slotOff[s] // the caller's array: no arena range
			continue
		}
		o := b.memOwner(s)
		offs[s] = newOff[o] + c.slotOff[s] - c.slotOff[o]
	}
	c.slotOff = offs
}

// frontLayout lays out, before the arena exists, the slots that will keep
// ranges of their own whatever the lifetimes (those holding state between
// calls, see pack) at the start of the arena, and the others after them,
// each in its original order and 16-byte alignment. Nothing but distinct
// slots' positions changes, so folding and fusion see the same program,
// and pack can later reuse the rest of the arena, never written by the
// folding program, without moving or clearing anything.
//
// The buffers of the wrt nodes and of their gradients that hold nothing
// but what an evaluation writes (no initial value, no constant) go last,
// in a region of their own, [c.ioOff, c.arenaLen): a Program allocates it
// only when it copies x in (see Program.ensureIO), so programs evaluated
// in place on the caller's parameters and gradient, as a training loss
// is, never hold a second copy of them.
func (b *builder) frontLayout() {
	c := b.c
	ns := len(c.slotOff)
	front := make([]bool, ns)
	mark := func(s int) { front[b.memOwner(s)] = true }
	for _, s := range c.wrt {
		mark(s)
	}
	for _, s := range c.gradSlots {
		mark(s)
	}
	for _, s := range c.extra {
		mark(s)
	}
	if c.outSlot >= 0 {
		mark(c.outSlot)
	}
	if c.chkSlot >= 0 {
		mark(c.chkSlot)
	}
	for _, s := range c.data {
		mark(s)
	}
	for _, d := range b.inits {
		mark(d.slot)
	}
	for s := range ns {
		if b.isConst[s] || c.slotLen[s] == 0 {
			mark(s)
		}
	}
	for i, f := range b.folded {
		if f {
			mark(b.instr[i].out)
		}
	}
	io := b.ioSlots()
	newOff := make([]int, ns)
	at := 0
	for pass := 0; pass < 3; pass++ {
		if pass == 2 {
			at += at & 1 // an even start keeps the alignment in its own array
			c.ioOff = at
		}
		for s := range ns {
			if b.memOwner(s) != s {
				continue
			}
			switch pass {
			case 0:
				if !front[s] || io[s] {
					continue
				}
			case 1:
				if front[s] {
					continue
				}
			case 2:
				if !io[s] {
					continue
				}
			}
			if _, ok := c.shared[s]; ok {
				continue
			}
			at += (at ^ c.slotOff[s]) & 1 // keep the alignment, see pack
			newOff[s] = at
			at += c.slotLen[s]
		}
		if pass == 0 {
			b.frontEnd = at
		}
	}
	b.relayout(newOff)
	b.front, b.io, b.arenaLen = front, io, at
}

// ioSlots marks the slots owning the memory of a wrt node or of a
// gradient that are set by every evaluation before it reads them: not
// views, shared data, data, constants, folded values or other results.
func (b *builder) ioSlots() []bool {
	c := b.c
	ns := len(c.slotOff)
	io := make([]bool, ns)
	for _, s := range c.wrt {
		io[s] = true
	}
	for _, s := range c.gradSlots {
		io[s] = true
	}
	not := func(s int) {
		if s >= 0 {
			io[b.memOwner(s)] = false
		}
	}
	for _, s := range c.extra {
		not(s)
	}
	not(c.outSlot)
	not(c.chkSlot)
	for _, s := range c.data {
		not(s)
	}
	for _, d := range b.inits {
		not(d.slot)
	}
	for i, f := range b.folded {
		if f {
			not(b.instr[i].out)
		}
	}
	for s := range ns {
		_, sh := c.shared[s]
		if b.isConst[s] || sh || b.memOwner(s) != s || c.slotLen[s] == 0 {
			not(s)
			io[s] = false
		}
	}
	return io
}

// pack lays the slots after the front region (see frontLayout) out again
// so that those whose lifetimes do not overlap share memory, rewriting
// c.slotOff, c.ioOff and c.arenaLen. It reports whether it changed the
// layout.
func (b *builder) pack() bool {
	c := b.c
	ns := len(c.slotOff)
	if b.front == nil || len(b.front) != ns || c.arenaLen >= 1<<31 {
		return false // (ranges are sorted as 32-bit pairs below)
	}
	owner := b.memOwner
	keep := append([]bool(nil), b.front...)
	spans := b.lifetimes(keep)

	// The front region stays where it is. Other slots that must keep a
	// range of their own follow it, then the rest, placed first-fit,
	// largest first, where no slot with an overlapping lifetime lies.
	// None of them holds an initial value, and the memory after the front
	// region is still zero.
	newOff := make([]int, ns)
	at := b.frontEnd
	var free []int
	for s := range ns {
		if owner(s) != s {
			continue
		}
		if _, ok := c.shared[s]; ok {
			continue
		}
		switch {
		case b.io[s]:
			// Placed after the rest, below.
		case b.front[s]:
			newOff[s] = c.slotOff[s]
		case keep[s]:
			at += (at ^ c.slotOff[s]) & 1
			newOff[s] = at
			at += c.slotLen[s]
		default:
			free = append(free, s)
		}
	}
	if len(free) == 0 {
		return false
	}
	oldIO := c.ioOff
	sort.SliceStable(free, func(i, j int) bool { return c.slotLen[free[i]] > c.slotLen[free[j]] })
	base := at
	// The ranges occupied by conflicting slots, each as start<<32 | end
	// so that a plain sort orders them by start.
	var ivs []uint64
	placed := newLifetimeIndex(spans, ns)
	for _, s := range free {
		n := c.slotLen[s]
		ivs = ivs[:0]
		// The placed slots whose lifetime overlaps s's in some list.
		for _, t := range placed.conflicts(s) {
			ivs = append(ivs, uint64(newOff[t])<<32|uint64(newOff[t]+c.slotLen[t]))
		}
		// Equal starts may come in any order: the scan below gives the
		// same offset for any order of ranges with equal starts.
		slices.Sort(ivs)
		// Keep the slot's alignment to 16 bytes: gonum's vector kernels
		// peel an element off an unaligned start, which changes the order
		// of a sum and so its last bits.
		align := func(o int) int { return o + (o^c.slotOff[s])&1 }
		off := align(base)
		for _, v := range ivs {
			if int(v>>32) >= off+n {
				break
			}
			off = max(off, align(int(v&(1<<32-1))))
		}
		newOff[s] = off
		at = max(at, off+n)
		placed.add(s)
	}
	if at >= oldIO {
		return false
	}
	// The io region follows, shifted by an even amount.
	newIO := at + at&1
	for s := range ns {
		if owner(s) == s && b.io[s] {
			newOff[s] = c.slotOff[s] - oldIO + newIO
		}
	}
	if b.checkPack != nil {
		b.checkPack(b, newOff)
	}
	b.relayout(newOff)
	c.ioOff = newIO
	c.arenaLen = newIO + c.arenaLen - oldIO
	return true
}

// span is the lifetime of a slot in one instruction list: its first and
// last touching instruction, noSpan when it is not touched.
type span struct{ lo, hi int }

const noSpan = -1

// lifetimes returns each slot's lifetime in each list (value, full,
// outputs), indexed by list and slot owning memory, and marks in keep the
// slots that must keep their contents: first touched by a read, or by a
// write that may not cover them.
func (b *builder) lifetimes(keep []bool) [][]span {
	c := b.c
	ns := len(c.slotOff)
	owner := b.memOwner
	lists := [][]instr{c.value, c.full, c.outputs}
	spans := make([][]span, len(lists))
	var touched []int
	for li, list := range lists {
		sp := make([]span, ns)
		for s := range sp {
			sp[s] = span{noSpan, noSpan}
		}
		for t := range list {
			ins := &list[t]
			touched = touched[:0]
			if ins.kind == kFused {
				touched = fusedSlots(touched, ins)
				// A fused op writes all of its own output slot (n is its
				// length) unless it stores nothing (noOut).
				for k := range ins.fz {
					op := &ins.fz[k]
					for _, s := range []int{op.out, op.out2} {
						o := owner(s)
						if sp[o].lo == noSpan && (s != o || op.n != c.slotLen[o] || op.noOut) {
							keep[o] = true
						}
					}
				}
			} else {
				o := owner(ins.out)
				if sp[o].lo == noSpan && (ins.out != o || !c.writesAll(ins)) {
					keep[o] = true
				}
				touched = append(touched, ins.out)
				touched = append(touched, ins.args...)
			}
			for _, s := range touched {
				if s < 0 || s >= ns {
					continue
				}
				o := owner(s)
				if sp[o].lo == noSpan {
					// First touched by a read: it must keep its contents.
					if !writtenFirst(ins, s, o) {
						keep[o] = true
					}
					sp[o].lo = t
				}
				sp[o].hi = t
			}
		}
		spans[li] = sp
	}
	return spans
}

// writtenFirst reports whether instruction ins, the first to touch slot s
// (a view of o, or o itself), writes it rather than reads it.
func writtenFirst(ins *instr, s, o int) bool {
	if ins.kind != kFused {
		if ins.out != s {
			return false
		}
		for _, a := range ins.args {
			if a == s || a == o {
				return false
			}
		}
		return true
	}
	// A fused loop: s must be an op's output and read by no op before it.
	for k := range ins.fz {
		op := &ins.fz[k]
		for _, r := range []int{op.a.slot, op.b.slot, op.scale.slot, op.py.slot, op.pc.slot, op.sum} {
			if r == s || r == o {
				return false
			}
		}
		if op.out == s || op.out2 == s {
			return true
		}
		if op.pout == s {
			return false
		}
	}
	return false
}

// lifetimeIndex finds, among the slots placed so far, those whose lifetime
// overlaps a slot's in some list, through buckets of lifetimeBucket
// instructions per list: a scan of every placed slot for every slot made
// pack quadratic in the number of slots.
type lifetimeIndex struct {
	spans   [][]span
	buckets [][][]int32 // per list, per bucket: the placed slots living there
	stamp   []uint32    // per slot: the query that last found it
	query   uint32
	found   []int
}

const lifetimeBucket = 32

func newLifetimeIndex(spans [][]span, ns int) *lifetimeIndex {
	x := &lifetimeIndex{spans: spans, buckets: make([][][]int32, len(spans)), stamp: make([]uint32, ns)}
	for li, sp := range spans {
		last := -1
		for _, a := range sp {
			last = max(last, a.hi)
		}
		x.buckets[li] = make([][]int32, last/lifetimeBucket+1)
	}
	return x
}

// add records slot s as placed.
func (x *lifetimeIndex) add(s int) {
	for li, sp := range x.spans {
		a := sp[s]
		if a.lo == noSpan {
			continue
		}
		for k := a.lo / lifetimeBucket; k <= a.hi/lifetimeBucket; k++ {
			x.buckets[li][k] = append(x.buckets[li][k], int32(s))
		}
	}
}

// conflicts lists the placed slots whose lifetime overlaps s's in some
// list, each once. The slice is reused by the next call.
func (x *lifetimeIndex) conflicts(s int) []int {
	x.query++
	x.found = x.found[:0]
	for li, sp := range x.spans {
		a := sp[s]
		if a.lo == noSpan {
			continue
		}
		for k := a.lo / lifetimeBucket; k <= a.hi/lifetimeBucket; k++ {
			for _, t := range x.buckets[li][k] {
				b := sp[t]
				if x.stamp[t] != x.query && a.lo <= b.hi && b.lo <= a.hi {
					x.stamp[t] = x.query
					x.found = append(x.found, int(t))
				}
			}
		}
	}
	return x.found
}
