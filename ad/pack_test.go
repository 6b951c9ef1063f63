package ad

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// withoutPacking gives every slot its own arena range, the reference that
// packed programs are compared with.
func withoutPacking() Option { return func(c *config) { c.noPack = true } }

// TestFusedSlotsCoverFop fails when fop gains a field that may name a
// slot: fusedSlots (pack.go) must then list it, or buffer sharing could
// give a slot a fused loop still uses to another node.
func TestFusedSlotsCoverFop(t *testing.T) {
	known := map[string]bool{"out": true, "out2": true, "sum": true, "pout": true,
		"a": true, "b": true, "scale": true, "py": true, "pc": true, "n": true}
	intT, opT := reflect.TypeOf(0), reflect.TypeOf(foperand{})
	ft := reflect.TypeOf(fop{})
	for i := range ft.NumField() {
		f := ft.Field(i)
		if (f.Type == intT || f.Type == opT || f.Type.Kind() == reflect.Slice) && !known[f.Name] {
			t.Errorf("fop.%s (%v) is unknown to fusedSlots: list it there if it names a slot, here otherwise", f.Name, f.Type)
		}
	}
	ot := reflect.TypeOf(foperand{})
	for i := range ot.NumField() {
		if f := ot.Field(i); f.Name != "slot" && f.Type == intT && f.Name != "off" {
			t.Errorf("foperand.%s is unknown to fusedSlots", f.Name)
		}
	}
}

// mlpGraph is a three-layer tanh network on fixed data, differentiated with
// respect to its weights: most of its gradient program's buffers are dead
// soon after they are written.
func mlpGraph(g *G.ExprGraph) (*G.Node, []*G.Node) {
	const rows, width = 6, 5
	x := constMatrix(g, "data", 7, rows, width)
	var wrt []*G.Node
	h := x
	for l := 0; l < 3; l++ {
		w := G.NewMatrix(g, tensor.Float64, G.WithShape(width, width), G.WithName("w"+string(rune('0'+l))))
		wrt = append(wrt, w)
		h = G.Must(G.Tanh(G.Must(G.Mul(h, w))))
	}
	return G.Must(G.Sum(G.Must(G.Square(h)))), wrt
}

// TestPackMatchesUnpacked checks that buffer sharing changes no result, bit
// for bit, for every test graph and entry point, across calls at different
// points (a shared buffer must never carry a stale value into a later
// call), and that it shrinks the arena of a network's gradient program.
func TestPackMatchesUnpacked(t *testing.T) {
	type tc struct {
		name  string
		build graphFunc
		gen   func(*rand.Rand, int) []float64
	}
	cases := []tc{{"mlp", mlpGraph, normals}}
	for _, c := range graphCases {
		cases = append(cases, tc{c.name, c.build, c.gen})
	}
	for _, c := range fuseCases {
		cases = append(cases, tc{c.name, c.build, c.gen})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			packed, plain := compileFunc(t, c.build), compileFunc(t, c.build, withoutPacking())
			// Keeping each slot's alignment may cost one element per slot.
			if packed.code.arenaLen > plain.code.arenaLen+len(plain.code.slotOff) {
				t.Errorf("packed arena %d > unpacked %d", packed.code.arenaLen, plain.code.arenaLen)
			}
			if c.name == "mlp" && packed.code.arenaLen >= plain.code.arenaLen {
				t.Errorf("packing did not shrink the network's arena (%d)", plain.code.arenaLen)
			}
			rng := rand.New(rand.NewPCG(5, 6))
			dim := packed.Dim()
			g1, g2, g3 := make([]float64, dim), make([]float64, dim), make([]float64, dim)
			same := func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
			}
			for trial := 0; trial < 4; trial++ {
				x := c.gen(rng, dim)
				v2, err2 := plain.LogDensityGrad(x, g2)
				v1, err1 := packed.LogDensityGrad(x, g1)
				if (err1 == nil) != (err2 == nil) {
					t.Fatalf("errors: packed %v, unpacked %v", err1, err2)
				}
				v3, err3 := packed.LogDensityGradInPlace(x, g3)
				v4, err4 := packed.LogDensity(x)
				w4, _ := plain.LogDensity(x)
				if (err3 == nil) != (err2 == nil) || (err4 == nil) != (err2 == nil) {
					t.Fatalf("in place: %v; LogDensity: %v; unpacked %v", err3, err4, err2)
				}
				if !same(v1, v2) || !same(v3, v2) || !same(v4, w4) {
					t.Errorf("x=%v: packed %v (in place %v, LogDensity %v), unpacked %v (%v)", x, v1, v3, v4, v2, w4)
				}
				for i := range g1 {
					if !same(g1[i], g2[i]) || (err2 == nil && !same(g3[i], g2[i])) {
						t.Errorf("x=%v: packed grad[%d] %v (in place %v), unpacked %v", x, i, g1[i], g3[i], g2[i])
					}
				}
			}
		})
	}
}

// TestPackClone checks that clones of a packed program evaluate alike.
func TestPackClone(t *testing.T) {
	p := compileFunc(t, mlpGraph)
	q := p.Clone()
	x := normals(rand.New(rand.NewPCG(1, 2)), p.Dim())
	checkSameNumbers(t, p, "original", q, "clone", x)
}

// TestLazyIO checks that a gradient program evaluated in place never
// allocates the buffers of its parameters and gradient (the io region),
// nor do its clones; that a copying call allocates them once, with
// unchanged results; and that unpacked programs agree bit for bit.
func TestLazyIO(t *testing.T) {
	p := compileFunc(t, mlpGraph)
	plain := compileFunc(t, mlpGraph, withoutPacking())
	c := p.code
	if c.ioEager || c.arenaLen-c.ioOff < 2*p.Dim() || len(p.arena) != c.ioOff {
		t.Fatalf("io region [%d, %d) of %d parameters, eager %v, arena %d", c.ioOff, c.arenaLen, p.Dim(), c.ioEager, len(p.arena))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	q := p.Clone()
	for trial := range 3 {
		x := normals(rng, p.Dim())
		want := make([]float64, p.Dim())
		wv := mustGrad(t, plain, x, want)
		for k, prog := range []*Program{p, q} {
			g := make([]float64, p.Dim())
			v, err := prog.LogDensityGradInPlace(x, g)
			if err != nil || v != wv {
				t.Fatalf("trial %d program %d: %v (%v), want %v", trial, k, v, err, wv)
			}
			for i := range g {
				if g[i] != want[i] {
					t.Fatalf("trial %d program %d: grad[%d] = %v, want %v", trial, k, i, g[i], want[i])
				}
			}
			if prog.io != nil && (k == 0 || trial < 2) {
				t.Fatalf("trial %d program %d: an in-place call allocated the io region", trial, k)
			}
		}
		if trial == 1 { // a copying call allocates it, then in place again
			v, err := q.LogDensity(x)
			if err != nil || v != wv {
				t.Fatalf("LogDensity %v (%v), want %v", v, err, wv)
			}
			if q.io == nil {
				t.Fatal("LogDensity ran without the io region")
			}
			if r := q.Clone(); r.io != nil {
				t.Error("a clone copied the io region")
			}
		}
	}
}
