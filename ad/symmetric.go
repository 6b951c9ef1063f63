package ad

import (
	"math"

	"gonum.org/v1/gonum/blas"
)

// Products by a symmetric matrix and by its transpose.
//
// The gradient of B in B·Bᵀ is Ḡ·B + Ḡᵀ·B (see gemmacc.go), and Ḡ is often
// symmetric: the gradient of a covariance matrix through a Cholesky factor,
// say, is symmetrised by its op. Then Ḡᵀ·B is Ḡ·B to the bit (internal/gemm
// sums each element's products in the order of the inner index, whatever
// the transposition, and the operands are equal elements), and the sum is
// the one product 2·Ḡ·B: acc + acc = 2·acc exactly, for every acc
// including zeros of either sign, infinities and NaNs. Before products are
// accumulated, mergeSymmetricProducts rewrites such sums, when the two
// products are read by nothing else, into that one product with alpha 2.
//
// A slot is known to be symmetric when its writer is a Kernel that says so
// (SymmetricOutput), a product A·Aᵀ or Aᵀ·A of one slot (x·y = y·x
// exactly), or an elementwise op of symmetric matrices of one size and
// scalars.

// symmetricSlots returns the side of each slot of list's results that is an
// exactly symmetric square matrix.
func (c *code) symmetricSlots(list []instr) map[int]int {
	sym := make(map[int]int)
	// The side of an n-element square; a non-square n is caught below.
	side := func(n int) int { return int(math.Sqrt(float64(n))) }
	// A slot counts only if one instruction of list writes it: its value
	// is then that instruction's result wherever list reads it.
	writes := make(map[int]int)
	for i := range list {
		writes[list[i].out]++
	}
	for i := range list {
		ins := &list[i]
		n := c.slotLen[ins.out]
		if writes[ins.out] != 1 || n < 4 {
			continue
		}
		s := 0
		switch ins.kind {
		case kKernel:
			if k, ok := c.kernels[ins.kernel].(Symmetric); ok && k.SymmetricOutput() {
				s = side(n)
			}
		case kGemm:
			l := &ins.la
			if !ins.acc && len(ins.args) == 2 && ins.args[0] == ins.args[1] && l.tA != l.tB && l.m == l.n {
				s = l.m
			}
		case kUnary:
			s = sym[ins.args[0]]
		case kBinary:
			a, b := ins.args[0], ins.args[1]
			switch ins.variant {
			case 0:
				if sym[a] != 0 && sym[a] == sym[b] {
					s = sym[a]
				}
			case 1:
				s = sym[b]
			case 2:
				s = sym[a]
			}
		}
		if s > 0 && s*s == n {
			sym[ins.out] = s
		}
	}
	return sym
}

// mergeSymmetricProducts applies the rewrite above to list, an entry
// point's instructions before products are accumulated and fused; liveOut
// are the slots the entry point reads after running it. It returns the new
// list.
func (c *code) mergeSymmetricProducts(list []instr, liveOut []int) []instr {
	sym := c.symmetricSlots(list)
	if len(sym) == 0 {
		return list
	}
	u := newUseIndex(c, list, liveOut)
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
		u.replaceArgs(i, add.args, prod.args)
		*add = prod
		drop[g], drop[h] = true, true
		changed = true
	}
	if !changed {
		return list
	}
	return without(list, drop)
}
