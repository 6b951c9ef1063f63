package ppl

import (
	"math"
	"strings"
	"testing"
)

func TestTerms(t *testing.T) {
	tm, err := NewTerms(130, 0, 63, 64, 129)
	if err != nil {
		t.Fatal(err)
	}
	if tm.Count() != 4 || !tm.Has(64) || tm.Has(65) || tm.Has(-1) || tm.Has(130) {
		t.Errorf("membership wrong: %v", tm)
	}
	if got := tm.String(); got != "{0,63,64,129}" {
		t.Errorf("String = %q", got)
	}
	u := tm.With(5).Without(63)
	if tm.Has(5) || !tm.Has(63) {
		t.Error("With/Without changed the receiver")
	}
	if got := u.Indices(); len(got) != 4 || got[1] != 5 || got[2] != 64 {
		t.Errorf("Indices = %v", got)
	}
	for i, want := range map[int]int{0: 0, 1: 1, 63: 1, 64: 2, 65: 3, 129: 3} {
		if got := tm.Rank(i); got != want {
			t.Errorf("Rank(%d) = %d, want %d", i, got, want)
		}
	}
	back, err := ParseTerms(130, tm.String())
	if err != nil || !back.Equal(tm) || back.Key() != tm.Key() {
		t.Errorf("ParseTerms(%q) = %v, %v", tm.String(), back, err)
	}
	if tm.Key() == u.Key() {
		t.Error("different sets share a key")
	}
	v, err := TermsFromIndicators([]int{1, 0, 1})
	if err != nil || v.String() != "{0,2}" || v.Indicators()[2] != 1 {
		t.Errorf("TermsFromIndicators = %v, %v", v, err)
	}
	for name, f := range map[string]func() error{
		"p = 0":          func() error { _, err := NewTerms(0); return err },
		"index too big":  func() error { _, err := NewTerms(5, 5); return err },
		"negative index": func() error { _, err := NewTerms(5, -1); return err },
		"indicator 2":    func() error { _, err := TermsFromIndicators([]int{0, 2}); return err },
		"parse":          func() error { _, err := ParseTerms(5, "{1,x}"); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestModelPriors(t *testing.T) {
	// Each prior sums to one over the 2^p sets.
	p := 6
	for _, q := range []ModelPrior{BetaBinomial{1, 1}, BetaBinomial{2, 3}, Bernoulli{0.2}, UniformModels{}} {
		var sum float64
		for m := range 1 << p {
			var idx []int
			for i := range p {
				if m&(1<<i) != 0 {
					idx = append(idx, i)
				}
			}
			tm, _ := NewTerms(p, idx...)
			sum += math.Exp(q.LogModelPrior(tm))
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%v sums to %v", q, sum)
		}
	}
}

func linearBuild(extra int) BuildFunc {
	return func(b *Builder, tm Terms) error {
		a := b.Real("a")
		b.Sample(Normal{Mu: 0.0, Sigma: 1.0}, a)
		if k := tm.Count() + extra; k > 0 {
			beta := b.Real("beta", k)
			b.Sample(Normal{Mu: 0.0, Sigma: 1.0}, beta)
		}
		return nil
	}
}

func TestSelectionSpace(t *testing.T) {
	sp, err := NewSelectionSpace(5, linearBuild(0), WithModelCache(2))
	if err != nil {
		t.Fatal(err)
	}
	if sp.Always() != 1 || sp.Shared() != 0 || sp.Names()[4] != "x5" {
		t.Errorf("always %d shared %d names %v", sp.Always(), sp.Shared(), sp.Names())
	}
	a, _ := NewTerms(5, 1, 3)
	m, err := sp.Model(a)
	if err != nil || m.Dim() != 3 || sp.Dim(a) != 3 || sp.Slot(a, 3) != 2 {
		t.Fatalf("model %v: %v dim %d", a, err, m.Dim())
	}
	if _, err := sp.Model(a); err != nil || sp.Hits() != 1 {
		t.Errorf("cache hit: %v, hits %d", err, sp.Hits())
	}
	for i := range 4 {
		tm, _ := NewTerms(5, i)
		if _, err := sp.Model(tm); err != nil {
			t.Fatal(err)
		}
	}
	if sp.Cached() != 2 {
		t.Errorf("cache holds %d models, bound 2", sp.Cached())
	}
	c := sp.Clone()
	if c.Cached() != 0 || c.Builds() != 0 {
		t.Errorf("clone: %d cached, %d builds", c.Cached(), c.Builds())
	}
	lp, err := sp.LogPrior(a)
	if want := -math.Log(6) - math.Log(10); err != nil || math.Abs(lp-want) > 1e-12 {
		t.Errorf("log prior %v, want %v (%v)", lp, want, err)
	}
}

func TestSelectionSpaceBadInput(t *testing.T) {
	cases := map[string]struct {
		f    func() error
		want string
	}{
		"p = 0":     {func() error { _, err := NewSelectionSpace(0, linearBuild(0)); return err }, "p = 0"},
		"nil build": {func() error { _, err := NewSelectionSpace(3, nil); return err }, "nil build"},
		"wrong dimension": {func() error {
			sp, err := NewSelectionSpace(3, func(b *Builder, _ Terms) error { b.Real("beta", 2); return nil })
			if err != nil {
				return err
			}
			tm, _ := NewTerms(3, 0)
			_, err = sp.Model(tm)
			return err
		}, "dimension"},
		"wrong p": {func() error {
			sp, _ := NewSelectionSpace(3, linearBuild(0))
			tm, _ := NewTerms(4, 0)
			_, err := sp.Model(tm)
			return err
		}, "4 terms for a space of 3"},
		"fewer than shared": {func() error {
			_, err := NewSelectionSpace(3, linearBuild(0), WithSelectionShared(2))
			return err
		}, "shared"},
		"cache": {func() error { _, err := NewSelectionSpace(3, linearBuild(0), WithModelCache(1)); return err }, "cache"},
		"names": {func() error { _, err := NewSelectionSpace(3, linearBuild(0), WithTermNames("a")); return err }, "names"},
		"prior": {func() error {
			_, err := NewSelectionSpace(3, linearBuild(0), WithModelPrior(Bernoulli{1.5}))
			return err
		}, "Bernoulli"},
		"panicking build": {func() error {
			_, err := NewSelectionSpace(3, func(*Builder, Terms) error { panic("boom") })
			return err
		}, "panicked"},
	}
	for name, c := range cases {
		err := c.f()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", name, err, c.want)
		}
	}
}

// TestTermsReuse checks that SetIndices and AppendKey, which the samplers
// use to look models up without allocating, agree with NewTerms and Key.
func TestTermsReuse(t *testing.T) {
	scratch, err := NewTerms(130)
	if err != nil {
		t.Fatal(err)
	}
	var key []byte
	for _, idx := range [][]int{{}, {0}, {5, 64, 129}, {1, 2, 3, 63, 64, 65}, {7}} {
		want, err := NewTerms(130, idx...)
		if err != nil {
			t.Fatal(err)
		}
		if err := scratch.SetIndices(idx...); err != nil {
			t.Fatal(err)
		}
		key = scratch.AppendKey(key[:0])
		if !scratch.Equal(want) || string(key) != want.Key() {
			t.Errorf("SetIndices(%v) = %v (key %q), NewTerms gives %v (key %q)", idx, scratch, key, want, want.Key())
		}
	}
	before := scratch.Key()
	if err := scratch.SetIndices(3, 130); err == nil || scratch.Key() != before {
		t.Errorf("SetIndices with an index out of range: err %v, set changed %t", err, scratch.Key() != before)
	}
	if n := testing.AllocsPerRun(100, func() {
		_ = scratch.SetIndices(5, 64, 129)
		key = scratch.AppendKey(key[:0])
	}); n != 0 {
		t.Errorf("SetIndices and AppendKey allocate %v times per call", n)
	}
}

func TestSelectionSpaceEvidence(t *testing.T) {
	sp, err := NewSelectionSpace(3, linearBuild(0))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := NewTerms(3, 1)
	if sp.HasEvidence() {
		t.Error("a space without WithModelEvidence has evidences")
	}
	if _, err := sp.LogEvidence(a); err == nil {
		t.Error("LogEvidence without WithModelEvidence: no error")
	}
	ev := func(t Terms) (float64, error) {
		if t.Has(2) {
			return math.NaN(), nil
		}
		return -float64(t.Count()), nil
	}
	sp, err = NewSelectionSpace(3, linearBuild(0), WithModelEvidence(ev))
	if err != nil {
		t.Fatal(err)
	}
	if le, err := sp.Clone().LogEvidence(a); err != nil || le != -1 {
		t.Errorf("clone's log evidence %v (%v), want -1", le, err)
	}
	c, _ := NewTerms(3, 2)
	if _, err := sp.LogEvidence(c); err == nil {
		t.Error("NaN evidence: no error")
	}
	if _, err := sp.LogEvidence(Terms{}); err == nil {
		t.Error("terms of another space: no error")
	}
	if _, err := NewSelectionSpace(3, linearBuild(0), WithModelEvidence(nil)); err == nil {
		t.Error("nil evidence function: no error")
	}
}
