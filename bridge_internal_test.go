package trj

import (
	"strings"
	"testing"
)

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
