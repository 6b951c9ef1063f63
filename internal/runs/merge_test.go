package runs

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestCheckParts: the merge rule names the setting that differs (or the
// data), and the missing, repeated or out-of-range chain.
func TestCheckParts(t *testing.T) {
	set := map[string]string{"Seed": "1", "Chains.Warmup": "10"}
	other := map[string]string{"Seed": "1", "Chains.Warmup": "20"}
	p := func(name, fp string, s map[string]string, chains ...int) Part {
		return Part{Name: name, Fingerprint: fp, Settings: s, Chains: chains}
	}
	if err := CheckParts([]Part{p("a", "f", set, 1), p("b", "f", set, 0, 2)}, 3); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		parts []Part
		n     int
		want  string
	}{
		{nil, 2, "nothing to merge"},
		{[]Part{p("a", "f", set, 0), p("b", "g", other, 1)}, 2, "b is from a different run than a: the setting Chains.Warmup = 10 vs 20"},
		{[]Part{p("a", "f", set, 0), p("b", "g", set, 1)}, 2, "the data (or the models) differ"},
		{[]Part{p("a", "f", set, 0), p("b", "g", nil, 1)}, 2, "models, data or settings differ"},
		{[]Part{p("a", "", set, 0)}, 1, "a has no fingerprint"},
		{[]Part{p("a", "f", set, 0, 1), p("b", "f", set, 1)}, 2, "chain 2 is in both a and b"},
		{[]Part{p("a", "f", set, 0)}, 3, "missing chain(s) 2, 3"},
		{[]Part{p("a", "f", set, 0, 5)}, 2, "a holds chain 6, outside the run's 2 chains"},
	} {
		if err := CheckParts(c.parts, c.n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.parts, err, c.want)
		}
	}
}

// TestDescribe: settings are listed by path, values as text, deep or
// composite values by digest; Differ names the first that differs.
func TestDescribe(t *testing.T) {
	type inner struct {
		Warmup int
		Draws  []float64
	}
	type settings struct {
		Seed     uint64
		Name     string
		Chains   inner
		Method   any
		Progress func()
	}
	rules := &HashRules{Skip: func(_ reflect.Type, name string) bool { return name == "Progress" }}
	a := Describe(&settings{Seed: 1, Chains: inner{Warmup: 10, Draws: []float64{1}}, Method: inner{}}, 2, rules)
	b := Describe(&settings{Seed: 1, Chains: inner{Warmup: 10, Draws: []float64{2}}, Method: inner{}, Progress: func() {}}, 2, rules)
	if a["Seed"] != "1" || a["Name"] != `""` || a["Chains.Warmup"] != "10" || !strings.HasPrefix(a["Chains.Draws"], "[]float64 #") {
		t.Errorf("described %v", a)
	}
	if _, ok := a["Progress"]; ok {
		t.Error("a skipped field is listed")
	}
	if d := Differ(a, b); !strings.HasPrefix(d, "Chains.Draws = []float64 #") {
		t.Errorf("Differ: %q", d)
	}
	if d := Differ(a, a); d != "" {
		t.Errorf("Differ of equal lists: %q", d)
	}
}

// TestClaimDir: a folder with another run's (or an unmarked) chain file
// is refused with the file named; the same run's files and other files
// are allowed.
func TestClaimDir(t *testing.T) {
	dir := t.TempDir()
	re := regexp.MustCompile(`^c-[0-9]+\.csv$`)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("c-1.csv", "# fingerprint = f\nx\n1\n")
	write("notes.csv", "x\n")
	if err := ClaimDir(dir, re, "f"); err != nil {
		t.Errorf("the same run: %v", err)
	}
	if err := ClaimDir(dir, re, "g"); err == nil || !strings.Contains(err.Error(), "c-1.csv; fingerprint f, this run's g") {
		t.Errorf("another run: %v", err)
	}
	write("c-2.csv", "x\n1\n")
	if err := ClaimDir(dir, re, "f"); err == nil || !strings.Contains(err.Error(), "c-2.csv; without a fingerprint") {
		t.Errorf("an unmarked file: %v", err)
	}
}
