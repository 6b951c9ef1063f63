package kernels

import (
	"math"
	"testing"
)

// TestAcceptESS checks the effective number of accepted proposals against
// hand-computed values: (Σα)²/Σα² per ordered pair over all groups, zero
// where nothing was accepted, and the smallest off-diagonal pair.
func TestAcceptESS(t *testing.T) {
	records := [][]JumpRecord{
		{{From: 0, To: 1, AcceptProb: 1}, {From: 0, To: 1, AcceptProb: 0}, {From: 1, To: 0, AcceptProb: 0.5}},
		{{From: 0, To: 1, AcceptProb: 1}, {From: 1, To: 0, AcceptProb: 0.5}, {From: 1, To: 0, AcceptProb: 0.25}},
		{{From: 0, To: 2, AcceptProb: 0}, {From: 2, To: 0, AcceptProb: 0.1}, {From: 1, To: 2, AcceptProb: 0.3}, {From: 2, To: 1, AcceptProb: 0.3}},
	}
	ess, least, from, to := AcceptESS(records, 3)
	want := [][]float64{
		{0, 2, 0}, // 0→1: (1+1)²/2; 0→2: nothing accepted
		{1.25 * 1.25 / (0.25 + 0.25 + 0.0625), 0, 1},
		{1, 1, 0},
	}
	for k := range want {
		for kp := range want[k] {
			if math.Abs(ess[k][kp]-want[k][kp]) > 1e-12 {
				t.Errorf("ESS %d→%d = %v, want %v", k, kp, ess[k][kp], want[k][kp])
			}
		}
	}
	if least != 0 || from != 0 || to != 2 {
		t.Errorf("least %v at %d→%d, want 0 at 0→2", least, from, to)
	}
}

// TestBalance checks that the balance estimate returns π exactly from mean
// acceptances that satisfy detailed balance (Metropolis acceptances
// min(1, π(k')/π(k)) with uniform jumps), and fails when a model is cut off.
func TestBalance(t *testing.T) {
	pi := []float64{0.1, 0.2, 0.3, 0.4}
	K := len(pi)
	jump := UniformJumps(K)
	e := BridgeEstimate{MeanAccept: make([][]float64, K)}
	for k := range K {
		e.MeanAccept[k] = make([]float64, K)
		for i := range K {
			e.MeanAccept[k][i] = math.NaN()
			if i != k {
				e.MeanAccept[k][i] = 0.3 * min(1, pi[i]/pi[k])
			}
		}
	}
	got, err := e.Balance(jump)
	if err != nil {
		t.Fatal(err)
	}
	for k := range pi {
		if math.Abs(got[k]-pi[k]) > 1e-12 {
			t.Errorf("π(%d) = %v, want %v", k, got[k], pi[k])
		}
	}
	for i := range K {
		if i != 3 {
			e.MeanAccept[3][i], e.MeanAccept[i][3] = 0, 0
		}
	}
	if got, err := e.Balance(jump); err == nil {
		t.Errorf("model 3 cut off: got %v, want an error", got)
	}
}
