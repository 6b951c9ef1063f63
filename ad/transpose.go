package ad

import "gonum.org/v1/gonum/blas"

// Transposes around matrix products.
//
// gorgonia writes BBᵀ as a product with a transposed copy, and the
// gradient of a product as products of transposes and transposes of
// products. A product reads either operand transposed for free, and the
// transpose of a product is the product of the transposes in the other
// order, so before the entry points take their instructions the compiler
//
//   - lets a matrix product read the source of a transposed operand with
//     its transpose flag flipped;
//   - makes a product whose result only a transpose reads compute that
//     transpose directly, (op(A)·op(B))ᵀ = op(B)ᵀ·op(A)ᵀ;
//   - drops the transposes that nothing reads any more.
//
// Every element is the same sum of the same products in the same order
// (internal/gemm fixes the order, and x·y = y·x exactly), so the values
// are unchanged to the bit.

// transposeOf describes a 2-D transpose instruction: its out slot holds
// the c×r transpose of the r×c matrix in slot src.
type transposeOf struct {
	src, r, c int
}

// isTranspose reports whether a gather from one r×c matrix into n = r·c
// elements is its transpose.
func isTranspose(argOf, srcOf []int, r, c int) bool {
	if len(argOf) != r*c {
		return false
	}
	for j := range argOf {
		if argOf[j] != 0 || srcOf[j] != (j%r)*c+j/r {
			return false
		}
	}
	return true
}

// foldTransposes rewrites b.instr as described above. roots are the slots
// that the entry points read (output, gradients, WithOutputs nodes): their
// instructions stay as they are.
func (b *builder) foldTransposes(roots []int) {
	if len(b.transposes) == 0 {
		return
	}
	owner := func(s int) int {
		if o, ok := b.viewOf[s]; ok {
			return o
		}
		return s
	}
	pinned := make(map[int]bool, len(roots))
	for _, s := range roots {
		pinned[owner(s)] = true
	}
	readers := make(map[int]int)
	producer := make(map[int]int) // slot -> index of the instruction writing it
	for i := range b.instr {
		for _, a := range b.instr[i].args {
			readers[owner(a)]++
		}
		producer[b.instr[i].out] = i
	}
	isGemm := func(i int) bool { return b.instr[i].kind == kGemm && !b.folded[i] }

	// Operands: read the source with the flag flipped.
	for i := range b.instr {
		if !isGemm(i) {
			continue
		}
		ins := &b.instr[i]
		for k, a := range ins.args {
			t, ok := b.transposes[a]
			if !ok || b.folded[producer[a]] {
				continue
			}
			ins.args = append([]int(nil), ins.args...)
			ins.args[k] = t.src
			l := &ins.la
			if k == 0 {
				l.tA, l.ar, l.ac = flip(l.tA), t.r, t.c
			} else {
				l.tB, l.br, l.bc = flip(l.tB), t.r, t.c
			}
			readers[a]--
			readers[owner(t.src)]++
		}
	}

	dead := make([]bool, len(b.instr))
	// Results: a product read only by a transpose writes the transpose.
	for i := range b.instr {
		ins := &b.instr[i]
		t, ok := b.transposes[ins.out]
		if !ok || b.folded[i] {
			continue
		}
		j, ok := producer[t.src]
		if !ok || !isGemm(j) || readers[t.src] != 1 || pinned[t.src] || owner(t.src) != t.src || b.hasViews(t.src) {
			continue
		}
		g := &b.instr[j]
		l := g.la
		g.la = linalg{tA: flip(l.tB), tB: flip(l.tA), ar: l.br, ac: l.bc, br: l.ar, bc: l.ac, m: l.n, n: l.m}
		g.args = []int{g.args[1], g.args[0]}
		g.out = ins.out
		b.owner[j] = b.owner[i]
		dead[i] = true
		readers[t.src] = 0
	}
	// Transposes nothing reads.
	for i := range b.instr {
		s := b.instr[i].out
		if _, ok := b.transposes[s]; ok && !dead[i] && readers[s] == 0 && !pinned[s] && !b.hasViews(s) {
			dead[i] = true
		}
	}
	k := 0
	for i := range b.instr {
		if dead[i] {
			continue
		}
		b.instr[k], b.owner[k], b.folded[k] = b.instr[i], b.owner[i], b.folded[i]
		k++
	}
	b.instr, b.owner, b.folded = b.instr[:k], b.owner[:k], b.folded[:k]
}

// hasViews reports whether some slot is a view of slot s.
func (b *builder) hasViews(s int) bool {
	for _, o := range b.viewOf {
		if o == s {
			return true
		}
	}
	return false
}

func flip(t blas.Transpose) blas.Transpose {
	if t == blas.Trans {
		return blas.NoTrans
	}
	return blas.Trans
}
