package ad

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	G "gorgonia.org/gorgonia"
)

// TestPackMatchesScan: pack, which finds conflicting slots through
// lifetimeIndex, lays the package's test graphs out exactly as the pass
// that tested every placed slot did (packOffsetsScan).
func TestPackMatchesScan(t *testing.T) {
	skipInRacePass(t)
	checked := 0
	check := func(b *builder, newOff []int) {
		if old := b.packOffsetsScan(); fmt.Sprint(old) != fmt.Sprint(newOff) {
			t.Errorf("layout %v, scanning pass %v", newOff, old)
		}
		checked++
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
		if _, err := Compile(g, out, wrt, func(c *config) { c.checkPack = check }); err != nil {
			t.Errorf("graph %d: %v", i, err)
		}
	}
	if checked == 0 {
		t.Error("no graph was packed: the comparison compared nothing")
	}
	t.Logf("%d graphs, %d layouts compared", len(builds), checked)
}

// packOffsetsScan is the layout of pack as first written, testing every
// placed slot for a conflict: the reference for lifetimeIndex.
func (b *builder) packOffsetsScan() []int {
	c := b.c
	ns := len(c.slotOff)
	if b.front == nil || len(b.front) != ns {
		return nil
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
		return nil
	}
	oldIO := c.ioOff
	sort.SliceStable(free, func(i, j int) bool { return c.slotLen[free[i]] > c.slotLen[free[j]] })
	conflict := func(s, t int) bool {
		for li := range spans {
			a, b := spans[li][s], spans[li][t]
			if a.lo != noSpan && b.lo != noSpan && a.lo <= b.hi && b.lo <= a.hi {
				return true
			}
		}
		return false
	}
	base := at
	type iv struct{ lo, hi int }
	var placed []int
	var ivs []iv
	for _, s := range free {
		n := c.slotLen[s]
		ivs = ivs[:0]
		for _, t := range placed {
			if conflict(s, t) {
				ivs = append(ivs, iv{newOff[t], newOff[t] + c.slotLen[t]})
			}
		}
		slices.SortFunc(ivs, func(a, b iv) int { return a.lo - b.lo })
		// Keep the slot's alignment to 16 bytes: gonum's vector kernels
		// peel an element off an unaligned start, which changes the order
		// of a sum and so its last bits.
		align := func(o int) int { return o + (o^c.slotOff[s])&1 }
		off := align(base)
		for _, v := range ivs {
			if v.lo >= off+n {
				break
			}
			off = max(off, align(v.hi))
		}
		newOff[s] = off
		at = max(at, off+n)
		placed = append(placed, s)
	}
	if at >= oldIO {
		return nil
	}
	// The io region follows, shifted by an even amount.
	newIO := at + at&1
	for s := range ns {
		if owner(s) == s && b.io[s] {
			newOff[s] = c.slotOff[s] - oldIO + newIO
		}
	}
	return newOff
}
