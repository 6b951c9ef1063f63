package main

import (
	"math"
	"testing"

	"github.com/trjgo/trj/selection"
)

// refPath is the reference the test reads; a variable so that a quick
// check can point it at another file.
var refPath = "testdata/n3_reference.json"

// TestReferenceParses: the reference JSON holds a PIP and an MCSE for
// each of N3finemapping's 1,001 columns, named as the data name them,
// with the settings that made it.
func TestReferenceParses(t *testing.T) {
	ref, err := readReference(refPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.PIP) != 1001 || ref.Names[0] != "v1" || ref.Names[1000] != "v1001" {
		t.Fatalf("%d PIPs, names %s … %s; want 1001, v1 … v1001", len(ref.PIP), ref.Names[0], ref.Names[len(ref.Names)-1])
	}
	if ref.Chains < 2 || ref.Steps <= 0 || ref.Batches <= 0 || ref.Command == "" {
		t.Errorf("settings: %d chains × %d steps, %d batches, command %q", ref.Chains, ref.Steps, ref.Batches, ref.Command)
	}
	var size float64
	for j, p := range ref.PIP {
		if !(p >= 0 && p <= 1) || !(ref.MCSE[j] >= 0 && ref.MCSE[j] < 0.01) {
			t.Errorf("%s: PIP %v ± %v", ref.Names[j], p, ref.MCSE[j])
		}
		size += p
	}
	// Three causal effects, one of them spread over many correlated
	// variants: the expected size is a little above 3.
	if size < 2.5 || size > 5 {
		t.Errorf("expected model size %.3f: want about 3", size)
	}
}

// TestShortRunAgreesWithReference: a short run of selection.Run with its
// default (exact, collapsed) kernel, 2 chains × 5,000 steps, finds the
// reference's ten largest PIPs, Rao-Blackwellised, within 4 standard
// errors (the run's MCSE and the reference's combined).
func TestShortRunAgreesWithReference(t *testing.T) {
	if testing.Short() {
		t.Skip("selection on 1,001 columns: about 10 CPU-s")
	}
	ref, err := readReference(refPath)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runTrj(&selection.Settings{Seed: 7, Chains: 2, Steps: 5000})
	if err != nil {
		t.Fatal(err)
	}
	// The Rao-Blackwellised PIPs: a visit frequency's batch-means MCSE near
	// 0 or 1 rests on the few steps a term spent on its rare side (none for
	// v653, PIP 0.9992, in 10,000 steps), where the conditional
	// probabilities vary at every step.
	for _, j := range topTerms(ref.PIP, 10) {
		e := res.PIP[j]
		if res.Names[j] != ref.Names[j] {
			t.Fatalf("term %d: %q in the run, %q in the reference", j, res.Names[j], ref.Names[j])
		}
		p := ref.PIP[j]
		se := math.Hypot(e.MCSE, ref.MCSE[j])
		if z := (e.P - p) / se; !(math.Abs(z) <= 4) {
			t.Errorf("%s: PIP %.4f ± %.4f, reference %.4f ± %.4f: z = %.2f", ref.Names[j], e.P, e.MCSE, p, ref.MCSE[j], z)
		}
	}
}
