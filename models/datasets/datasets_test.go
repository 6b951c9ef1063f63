package datasets

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestNamesOpenSize(t *testing.T) {
	names := Names()
	if len(names) != 44 {
		t.Fatalf("%d data sets, want 44: %v", len(names), names)
	}
	for _, want := range []string{ExchangeRates, RobustRegression, "posteriordb/diamonds-diamonds.json", "posteriordb/nes1980-nes.json", "posteriordb/earnings.json", SelectLinear, SelectLogistic} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("Names lacks %s: %v", want, names)
		}
	}
	for _, n := range names {
		r, err := Open(n)
		if err != nil {
			t.Fatalf("Open(%q): %v", n, err)
		}
		b, err := io.ReadAll(r)
		if cerr := r.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		size, err := Size(n)
		if err != nil || size != int64(len(b)) || size == 0 {
			t.Errorf("%s: Size %d (%v), read %d bytes", n, size, err, len(b))
		}
		rb, err := ReadFile(n)
		if err != nil || string(rb) != string(b) {
			t.Errorf("%s: ReadFile differs from Open (%v)", n, err)
		}
	}
	if b, err := fs.ReadFile(FS(), ExchangeRates); err != nil || !strings.HasPrefix(string(b), "x1,x2,x3,x4,x5,x6\n") {
		t.Errorf("FS: %v, %.20q", err, b)
	}
	if Label(RobustRegression) != "embedded:robust_regression_vs.csv" {
		t.Errorf("Label = %q", Label(RobustRegression))
	}
}

func TestMissing(t *testing.T) {
	for _, n := range []string{"nope.csv", "posteriordb", "README.md", "../go.mod", ""} {
		if r, err := Open(n); err == nil || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open(%q): %v, want an fs.ErrNotExist error", n, err)
			if r != nil {
				r.Close()
			}
		}
		if _, err := ReadFile(n); err == nil {
			t.Errorf("ReadFile(%q): no error", n)
		}
		if _, err := Size(n); err == nil {
			t.Errorf("Size(%q): no error", n)
		}
	}
}

// TestSizesMatchREADME checks the size column of README.md against the
// embedded files, so that the README cannot drift from the data.
func TestSizesMatchREADME(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([0-9 ]+) B")
	seen := map[string]bool{}
	var total int64
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		name := m[1]
		if !strings.HasSuffix(name, ".csv") && !strings.Contains(name, "/") {
			name = "posteriordb/" + name
		}
		want, err := strconv.ParseInt(strings.ReplaceAll(m[2], " ", ""), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Size(name)
		if err != nil || got != want {
			t.Errorf("%s: README says %d B, embedded %d B (%v)", name, want, got, err)
		}
		seen[name] = true
		total += got
	}
	for _, n := range Names() {
		if !seen[n] {
			t.Errorf("README.md does not list %s", n)
		}
	}
	m := regexp.MustCompile(`In all: (\d+) files, ([0-9 ]+) B`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("README.md lacks the total")
	}
	if n, _ := strconv.Atoi(m[1]); n != len(Names()) {
		t.Errorf("README total: %s files, have %d", m[1], len(Names()))
	}
	if v, _ := strconv.ParseInt(strings.ReplaceAll(m[2], " ", ""), 10, 64); v != total {
		t.Errorf("README total: %s B, have %d", m[2], total)
	}
}

func TestLoad(t *testing.T) {
	size := func(r io.Reader) (int, error) {
		b, err := io.ReadAll(r)
		return len(b), err
	}
	want, err := ReadFile(ExchangeRates)
	if err != nil {
		t.Fatal(err)
	}
	n, name, err := Load("", ExchangeRates, size)
	if err != nil || n != len(want) || name != Label(ExchangeRates) {
		t.Errorf("embedded: %d bytes from %q (%v), want %d from %q", n, name, err, len(want), Label(ExchangeRates))
	}
	path := filepath.Join(t.TempDir(), "x.csv")
	if err := os.WriteFile(path, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, name, err := Load(path, ExchangeRates, size); err != nil || n != 8 || name != path {
		t.Errorf("file: %d bytes from %q (%v), want 8 from %q", n, name, err, path)
	}
	if _, _, err := Load(path+".missing", ExchangeRates, size); err == nil {
		t.Error("a missing file was read")
	}
}
