package trj

import (
	"math"
	"strings"
	"testing"

	"github.com/trjgo/trj/kernels"
)

// TestAcceptESS checks the effective number of accepted proposals against
// hand-computed values: (Σα)²/Σα² per ordered pair over all groups, zero
// where nothing was accepted, and the smallest off-diagonal pair.
func TestAcceptESS(t *testing.T) {
	records := [][]kernels.JumpRecord{
		{{From: 0, To: 1, AcceptProb: 1}, {From: 0, To: 1, AcceptProb: 0}, {From: 1, To: 0, AcceptProb: 0.5}},
		{{From: 0, To: 1, AcceptProb: 1}, {From: 1, To: 0, AcceptProb: 0.5}, {From: 1, To: 0, AcceptProb: 0.25}},
		{{From: 0, To: 2, AcceptProb: 0}, {From: 2, To: 0, AcceptProb: 0.1}, {From: 1, To: 2, AcceptProb: 0.3}, {From: 2, To: 1, AcceptProb: 0.3}},
	}
	ess, least, from, to := acceptESS(records, 3)
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

// TestUnreliableBridgeTable checks that an unreliable bridge estimate is
// marked in the printed table and says which pair is short of accepted
// proposals.
func TestUnreliableBridgeTable(t *testing.T) {
	r := &Result{Labels: []string{"a", "b"}, Dims: []int{1, 2}, Transports: []TransportReport{{Kind: "affine"}, {Kind: "affine"}},
		Bridge: &Bridge{Normalized: []float64{0.3, 0.7}, NormalizedSE: []float64{0.01, 0.01}, MinAcceptESS: 12, MinFrom: 1, MinTo: 0, Unreliable: true}}
	s := r.String()
	if !strings.Contains(s, "0.3000 ± 0.0100 !") || !strings.Contains(s, "12 effective accepted proposals b → a") {
		t.Errorf("unreliable estimate not marked:\n%s", s)
	}
	r.Bridge.Unreliable = false
	if s := r.String(); strings.Contains(s, "!") {
		t.Errorf("reliable estimate marked:\n%s", s)
	}
}

// TestReportedBridge checks that the table shows the balance estimate,
// marked, where the Bartolucci estimate is unreliable and the balance
// estimate exists, gives the Bartolucci estimate beneath, and keeps the
// Bartolucci estimate otherwise.
func TestReportedBridge(t *testing.T) {
	b := &Bridge{Normalized: []float64{0.3, 0.7}, NormalizedSE: []float64{0.01, 0.01},
		Balance: []float64{0.25, 0.75}, BalanceSE: []float64{0.02, 0.02}, MinAcceptESS: 3, MinFrom: 0, MinTo: 1}
	r := &Result{Labels: []string{"a", "b"}, Dims: []int{1, 2}, Transports: []TransportReport{{Kind: "affine"}, {Kind: "affine"}}, Bridge: b}
	for _, tc := range []struct {
		unreliable, balance bool
		p, se               []float64
		cell, not           string
	}{
		{false, true, b.Normalized, b.NormalizedSE, "0.3000 ± 0.0100  ", "*"},
		{true, true, b.Balance, b.BalanceSE, "0.2500 ± 0.0200 *", "!"},
		{true, false, b.Normalized, b.NormalizedSE, "0.3000 ± 0.0100 !", "*"},
	} {
		b.Unreliable, b.Balance, b.BalanceSE = tc.unreliable, nil, nil
		if tc.balance {
			b.Balance, b.BalanceSE = []float64{0.25, 0.75}, []float64{0.02, 0.02}
		}
		p, se, bal := b.Reported()
		if bal != (tc.unreliable && tc.balance) || p[0] != tc.p[0] || se[0] != tc.se[0] {
			t.Errorf("unreliable %v, balance %v: Reported = %v ± %v (balance %v)", tc.unreliable, tc.balance, p, se, bal)
		}
		s := r.String()
		if !strings.Contains(s, tc.cell) || strings.Contains(s, tc.not) {
			t.Errorf("unreliable %v, balance %v: want %q and no %q in\n%s", tc.unreliable, tc.balance, tc.cell, tc.not, s)
		}
		if bal && !strings.Contains(s, "3 effective accepted proposals a → b") || bal && !strings.Contains(s, "Bartolucci: 0.3000 ± 0.0100, 0.7000 ± 0.0100\n") {
			t.Errorf("balance shown without the Bartolucci estimate and its diagnostic:\n%s", s)
		}
	}
}

// TestBalance checks that the balance estimate returns π exactly from mean
// acceptances that satisfy detailed balance (Metropolis acceptances
// min(1, π(k')/π(k)) with uniform jumps), and fails when a model is cut off.
func TestBalance(t *testing.T) {
	pi := []float64{0.1, 0.2, 0.3, 0.4}
	K := len(pi)
	jump := kernels.UniformJumps(K)
	e := kernels.BridgeEstimate{MeanAccept: make([][]float64, K)}
	for k := range K {
		e.MeanAccept[k] = make([]float64, K)
		for i := range K {
			e.MeanAccept[k][i] = math.NaN()
			if i != k {
				e.MeanAccept[k][i] = 0.3 * min(1, pi[i]/pi[k])
			}
		}
	}
	got, err := balance(e, jump)
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
	if got, err := balance(e, jump); err == nil {
		t.Errorf("model 3 cut off: got %v, want an error", got)
	}
}
