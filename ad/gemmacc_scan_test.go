package ad

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
)

// The passes as first written, scanning the list for every sum: the
// reference that the indexed passes must reproduce exactly.

// accumulateProductsScan is accumulateProducts with listUse.
func (c *code) accumulateProductsScan(list []instr, liveOut []int) []instr {
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

// mergeSymmetricProductsScan is mergeSymmetricProducts with listUse.
func (c *code) mergeSymmetricProductsScan(list []instr, liveOut []int) []instr {
	sym := c.symmetricSlots(list)
	if len(sym) == 0 {
		return list
	}
	u := listUse{c: c, list: list, liveOut: liveOut}
	drop := make([]bool, len(list))
	changed := false
	for i, add := range plainAdds(list) {
		p, q := add.args[0], add.args[1]
		if p == q || u.readers(p) != 1 || u.readers(q) != 1 {
			continue
		}
		g, h := u.writer(p), u.writer(q)
		if g < 0 || h < 0 || g > i || h > i || drop[g] || drop[h] {
			continue
		}
		gp, gq := &list[g], &list[h]
		if gp.kind != kGemm || gq.kind != kGemm || gp.acc || gq.acc || gp.scale != 0 || gq.scale != 0 ||
			gp.out != p || gq.out != q || len(gp.args) != 2 || len(gq.args) != 2 ||
			gp.args[0] != gq.args[0] || gp.args[1] != gq.args[1] {
			continue
		}
		lp, lq := gp.la, gq.la
		if lp.tA == lq.tA || lp.tB != lq.tB || lp.ar != lp.ac || sym[gp.args[0]] != lp.ar ||
			c.overlaps(add.out, gp.args[0]) || c.overlaps(add.out, gp.args[1]) {
			continue
		}
		// One product by the matrix as stored, at the sum's place: its
		// operands are results of instructions before both products.
		prod := *gp
		prod.la.tA = blas.NoTrans
		prod.out, prod.scale = add.out, 2
		*add = prod
		drop[g], drop[h] = true, true
		changed = true
	}
	if !changed {
		return list
	}
	return without(list, drop)
}

// listUse answers which instructions of an entry point's list read and
// write a slot's memory.
type listUse struct {
	c       *code
	list    []instr
	liveOut []int // slots the entry point reads after running list
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

// TestIndexedRewritesMatchScan: the indexed passes (useIndex) rewrite
// every entry point of the package's test graphs into the very
// instruction lists the scanning passes produce.
func TestIndexedRewritesMatchScan(t *testing.T) {
	skipInRacePass(t)
	rewritten := 0
	check := func(c *code, list []instr, liveOut []int) error {
		a := c.mergeSymmetricProducts(append([]instr(nil), list...), liveOut)
		b := c.mergeSymmetricProductsScan(append([]instr(nil), list...), liveOut)
		if fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", b) {
			return fmt.Errorf("mergeSymmetricProducts differs from the scan")
		}
		a = c.accumulateProducts(a, liveOut)
		b = c.accumulateProductsScan(b, liveOut)
		if fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", b) {
			return fmt.Errorf("accumulateProducts differs from the scan")
		}
		if len(a) < len(list) {
			rewritten++
		}
		return nil
	}
	var builds []graphFunc
	for _, c := range graphCases {
		builds = append(builds, c.build)
	}
	for _, c := range sliceCases {
		builds = append(builds, c.build)
	}
	builds = append(builds, mlpGraph, transposeGraph, ar1Graph(250, true), logisticGraph(50, 4))
	if !testing.Short() { // (the race pass runs with -short)
		for _, c := range fuseCases {
			builds = append(builds, c.build)
		}
	}
	for i, build := range builds {
		g := G.NewGraph()
		out, wrt := build(g)
		cfg := func(c *config) { c.checkRewrites = check }
		if _, err := Compile(g, out, wrt, cfg); err != nil {
			t.Errorf("graph %d: %v", i, err)
		}
	}
	if rewritten == 0 {
		t.Error("no graph had a sum rewritten: the comparison compared nothing")
	}
	t.Logf("%d graphs, %d entry points rewritten", len(builds), rewritten)
}
