package training

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSplit(t *testing.T) {
	w := []float64{1, 0, 2, 0, 3, 1, 1, 1, 1, 1}
	s, err := NewSplit(rand.New(rand.NewPCG(1, 2)), len(w), 0.3, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Val) != 3 || len(s.Train) != 7 {
		t.Fatalf("split %d/%d, want 7/3", len(s.Train), len(s.Val))
	}
	tot := 0.0
	for i, r := range s.Val {
		if s.ValWeights[i] != w[r] {
			t.Errorf("validation weight %d = %v, want %v", i, s.ValWeights[i], w[r])
		}
		tot += w[r]
	}
	if s.ValTotal() != tot {
		t.Errorf("ValTotal %v, want %v", s.ValTotal(), tot)
	}
	// Zero-weight rows are never drawn.
	idx := s.Minibatch(nil, 2000, rand.New(rand.NewPCG(3, 4)))
	for _, r := range idx {
		if w[r] == 0 {
			t.Fatalf("drew row %d of weight 0", r)
		}
	}
	if _, err := NewSplit(rand.New(rand.NewPCG(1, 2)), 2, 0.1, nil); err == nil {
		t.Error("an empty validation set was accepted")
	}
	if _, err := NewSplit(rand.New(rand.NewPCG(1, 2)), 3, 0, []float64{0, 0, 0}); err == nil {
		t.Error("zero total weight was accepted")
	}
}

func TestAdamFirstStep(t *testing.T) {
	// The bias-corrected first step moves each parameter by lr·g/(|g|+ε).
	p := []float64{1, 1, 1}
	NewAdam(3).Step(p, []float64{2, -0.5, 7}, [][2]int{{0, 2}}, 0.1, 1)
	want := []float64{1 - 0.1*2/(2+1e-8), 1 + 0.1*0.5/(0.5+1e-8), 1}
	for i := range p {
		if math.Abs(p[i]-want[i]) > 1e-15 {
			t.Errorf("p[%d] = %v, want %v", i, p[i], want[i])
		}
	}
}

func TestEarlyStop(t *testing.T) {
	e := NewEarlyStop(2, 0.5)
	p := []float64{0}
	for t0, loss := range []float64{5, 5, 3, 3, 2.9, 2.9} {
		p[0] = float64(t0)
		e.Add(loss)
		if stop := e.Stop(t0, p); stop != (t0 == 5) {
			t.Fatalf("iteration %d: stop %v", t0, stop)
		}
	}
	// The last window improved (by less than 0.5), so its parameters stay.
	if p[0] != 5 {
		t.Errorf("kept parameters %v, want those of iteration 5", p[0])
	}
	e = NewEarlyStop(1, 0)
	p[0] = 1
	e.Add(1)
	e.Stop(0, p)
	p[0] = 2
	e.Add(4)
	if !e.Stop(1, p) || p[0] != 1 {
		t.Errorf("a worse window did not restore the best parameters: %v", p[0])
	}
}
