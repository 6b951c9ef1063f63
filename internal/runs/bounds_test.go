package runs

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestCountsCheck checks the counts rule and its errors, named as fields
// and as flags.
func TestCountsCheck(t *testing.T) {
	n := Names{Pkg: "p", Path: "S."}
	flags := map[string]string{"Chains": "chains", "Warmup": "warmup", "Steps": "steps"}
	for _, c := range []struct {
		c          Counts
		field, flg string
	}{
		{Counts{Chains: 0, Steps: 1}, "p: S.Chains = 0: need at least 1 chain", "-chains 0: need at least 1 chain"},
		{Counts{Chains: MaxChains + 1, Steps: 1}, "p: S.Chains = 65537: at most", "lower -chains"},
		{Counts{Chains: 1, Steps: 3, MinSteps: 4}, "p: S.Steps = 3: need at least 4", "-steps 3: need at least 4"},
		{Counts{Chains: 1, Steps: 1, Warmup: -1}, "p: S.Warmup = -1", "-warmup -1"},
		{Counts{Chains: 1, Steps: 2, Warmup: math.MaxInt - 1}, "S.Warmup = 9223372036854775806 + S.Steps = 2 overflow", "-warmup 9223372036854775806 + -steps 2 overflow"},
		{Counts{Chains: 2, Steps: 1, Shard: []int{}}, "p: S.Shard is empty", "S.Shard is empty"},
		{Counts{Chains: 2, Steps: 1, Shard: []int{2}}, "S.Shard holds chain 2: chains are numbered 0 to 1 (S.Chains = 2)", "(-chains 2)"},
		{Counts{Chains: 2, Steps: 1, Shard: []int{0, 0}}, "S.Shard holds chain 0 twice", "S.Shard holds chain 0 twice"},
	} {
		err := c.c.Check(n)
		var se *SettingError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: %v, want a SettingError saying %q", c.c, err, c.field)
			continue
		}
		if got := se.WithFlags(flags).Error(); !strings.Contains(got, c.flg) || strings.HasPrefix(got, "p: ") {
			t.Errorf("%+v: with flags %q, want one saying %q", c.c, got, c.flg)
		}
	}
	ok := Counts{Chains: 3, Steps: 4, MinSteps: 4, Shard: []int{2, 0}}
	if err := ok.Check(n); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
}

// TestCheckMemory checks the memory rule: sizes beyond an int are refused
// everywhere, the error says what the run keeps, and a small run passes.
func TestCheckMemory(t *testing.T) {
	if err := CheckMemory(4, Kept{N: 1000, Bytes: 8, What: "kept steps"}); err != nil {
		t.Errorf("a small run: %v", err)
	}
	err := CheckMemory(4, Kept{N: math.MaxInt, Bytes: 4, What: "kept steps"}, Kept{N: 2, Bytes: 100, What: "models"})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "4 chains × (9223372036854775807 kept steps + 2 models) need more than 2⁶⁴ bytes") {
		t.Errorf("MaxInt steps: %v", err)
	}
	c := Counts{Chains: 1 << 16, Steps: math.MaxInt / 2, Shard: []int{0}}
	err = c.CheckMemory(Names{Pkg: "p", Path: "S."}, Kept{N: uint64(c.Steps), Bytes: 8, What: "kept steps"})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "p: S.Steps = 4611686018427387903: run too large: 1 chains ×") || !strings.Contains(err.Error(), "lower S.Steps or S.Chains") {
		t.Errorf("a shard of one chain: %v", err)
	}
}
