package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

var sizes = []int{1, 2, 3, 5, 7, 8, 9, 17, 63, 64, 65, 130}

// problem is one product with its operands, strides wider than the rows.
type problem struct {
	tA, tB        blas.Transpose
	m, n, k       int
	alpha, beta   float64
	a, b, c       []float64
	lda, ldb, ldc int
}

func newProblem(rng *rand.Rand, tA, tB blas.Transpose, m, n, k int, alpha, beta float64) *problem {
	p := &problem{tA: tA, tB: tB, m: m, n: n, k: k, alpha: alpha, beta: beta}
	aRows, aCols := m, k
	if tA == blas.Trans {
		aRows, aCols = k, m
	}
	bRows, bCols := k, n
	if tB == blas.Trans {
		bRows, bCols = n, k
	}
	p.lda = aCols + rng.IntN(3)
	p.ldb = bCols + rng.IntN(3)
	p.ldc = n + rng.IntN(3)
	p.a = randSlice(rng, aRows*p.lda)
	p.b = randSlice(rng, bRows*p.ldb)
	p.c = randSlice(rng, m*p.ldc)
	return p
}

func randSlice(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

func (p *problem) at(x []float64, ld int, trans bool, i, j int) float64 {
	if trans {
		return x[j*ld+i]
	}
	return x[i*ld+j]
}

// check compares got (the product of p) with a naive triple loop, within
// the error bound of the two sums: each is within (k+2)·ε·(|alpha|·Σ|a||b|
// + |beta||c|) of the exact value.
func (p *problem) check(t *testing.T, got []float64) {
	t.Helper()
	const eps = 0x1p-53
	for i := 0; i < p.m; i++ {
		for j := 0; j < p.ldc; j++ {
			old, v := p.c[i*p.ldc+j], got[i*p.ldc+j]
			if j >= p.n {
				if math.Float64bits(v) != math.Float64bits(old) {
					t.Fatalf("%v: C[%d,%d] outside the matrix changed from %v to %v", p, i, j, old, v)
				}
				continue
			}
			var s, abs float64
			for l := 0; l < p.k; l++ {
				x := p.at(p.a, p.lda, p.tA == blas.Trans, i, l) * p.at(p.b, p.ldb, p.tB == blas.Trans, l, j)
				s += x
				abs += math.Abs(x)
			}
			want := p.alpha * s
			bound := math.Abs(p.alpha) * abs
			if p.beta != 0 {
				want += p.beta * old
				bound += math.Abs(p.beta * old)
			}
			bound *= 2 * float64(p.k+2) * eps
			if math.IsNaN(v) || math.Abs(v-want) > bound {
				t.Fatalf("%v: C[%d,%d] = %v, want %v within %v", p, i, j, v, want, bound)
			}
		}
	}
}

func (p *problem) String() string {
	return fmt.Sprintf("%c%c m=%d n=%d k=%d alpha=%v beta=%v lda=%d ldb=%d ldc=%d", tChar(p.tA), tChar(p.tB), p.m, p.n, p.k, p.alpha, p.beta, p.lda, p.ldb, p.ldc)
}

func tChar(t blas.Transpose) byte {
	if t == blas.Trans {
		return 'T'
	}
	return 'N'
}

func (p *problem) run(work []float64) []float64 {
	c := append([]float64(nil), p.c...)
	Dgemm(p.tA, p.tB, p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, c, p.ldc, work)
	return c
}

var transposes = []blas.Transpose{blas.NoTrans, blas.Trans}

func TestDgemmSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tA := range transposes {
		for _, tB := range transposes {
			for _, m := range sizes {
				for _, n := range sizes {
					for _, k := range []int{1, 2, 7, 9, 64, 130} {
						p := newProblem(rng, tA, tB, m, n, k, 1, 0)
						if rng.IntN(2) == 0 {
							p.alpha, p.beta = -0.75, 1
						}
						var work []float64
						if rng.IntN(2) == 0 {
							work = make([]float64, WorkLen(k))
						}
						p.check(t, p.run(work))
					}
				}
			}
		}
	}
}

func TestDgemmAlphaBeta(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tA := range transposes {
		for _, tB := range transposes {
			for _, alpha := range []float64{0, 1, -1, 0.3} {
				for _, beta := range []float64{0, 1, -1, 2.5} {
					for _, s := range [][3]int{{5, 9, 3}, {8, 8, 8}, {64, 17, 65}, {3, 2, 0}} {
						p := newProblem(rng, tA, tB, s[0], s[1], s[2], alpha, beta)
						if beta == 0 {
							// beta = 0 overwrites C: its NaNs must not propagate.
							for i := 0; i < p.m; i++ {
								for j := 0; j < p.n; j++ {
									p.c[i*p.ldc+j] = math.NaN()
								}
							}
						}
						if alpha == 0 {
							// alpha = 0 does not read A and B.
							for i := range p.a {
								p.a[i] = math.NaN()
							}
							for i := range p.b {
								p.b[i] = math.Inf(1)
							}
						}
						got := p.run(nil)
						if beta == 0 {
							// check's reference reads the NaNs of C.
							for i := 0; i < p.m; i++ {
								for j := 0; j < p.n; j++ {
									p.c[i*p.ldc+j] = 0
								}
							}
						}
						if alpha == 0 {
							clear(p.a)
							clear(p.b)
						}
						p.check(t, got)
					}
				}
			}
		}
	}
}

// TestAsmMatchesGo checks that the assembly path gives the same bits as
// the Go kernel, so results do not depend on the processor.
func TestAsmMatchesGo(t *testing.T) {
	if !haveAVX2FMA {
		t.Skip("no AVX2 and FMA")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		tA, tB := transposes[rng.IntN(2)], transposes[rng.IntN(2)]
		m, n, k := sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))], 1+rng.IntN(80)
		alpha := []float64{1, -1.5, 0.1}[rng.IntN(3)]
		beta := []float64{0, 1, -0.5}[rng.IntN(3)]
		p := newProblem(rng, tA, tB, m, n, k, alpha, beta)
		got := p.run(make([]float64, WorkLen(k)))
		want := append([]float64(nil), p.c...)
		rsA, csA := p.lda, 1
		if tA == blas.Trans {
			rsA, csA = 1, p.lda
		}
		dgemmGo(tB == blas.Trans, m, n, k, alpha, p.a, rsA, csA, p.b, p.ldb, beta, want, p.ldc)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%v: element %d: assembly %v, Go %v", p, i, got[i], want[i])
			}
		}
	}
}

func TestDgemmNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tB := range transposes {
		p := newProblem(rng, blas.NoTrans, tB, 63, 13, 40, 1, 1)
		work := make([]float64, WorkLen(p.k))
		c := append([]float64(nil), p.c...)
		allocs := testing.AllocsPerRun(10, func() {
			Dgemm(p.tA, p.tB, p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, c, p.ldc, work)
		})
		if allocs != 0 {
			t.Errorf("%c: %v allocations per call, want 0", tChar(tB), allocs)
		}
	}
}

func TestDgemmPanics(t *testing.T) {
	a := make([]float64, 6)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"short A", func() { Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, a[:5], 3, a, 2, 0, a, 2, nil) }},
		{"short C", func() { Dgemm(blas.NoTrans, blas.NoTrans, 2, 3, 1, 1, a, 1, a, 3, 0, a[:5], 3, nil) }},
		{"narrow stride", func() { Dgemm(blas.NoTrans, blas.Trans, 2, 2, 3, 1, a, 2, a, 3, 0, a, 2, nil) }},
		{"negative", func() { Dgemm(blas.NoTrans, blas.NoTrans, -1, 2, 3, 1, a, 3, a, 2, 0, a, 2, nil) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}
