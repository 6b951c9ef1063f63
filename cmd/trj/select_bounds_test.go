package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trjgo/trj/internal/runs"
)

// TestSelectFlagBounds checks that trj select refuses counts out of the
// library's bounds as usage errors naming the flag, before the data are
// read (the -data file here does not exist): before, -steps 1e9 died of
// out-of-memory, MaxInt chains or -top panicked (-top after the whole
// run), and -warmup MaxInt with the default -steps overflowed.
func TestSelectFlagBounds(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.csv")
	maxInt := "9223372036854775807"
	for _, c := range []struct {
		name   string
		args   []string
		stderr string
		tooBig bool // refused only where the machine's memory is known
	}{
		{name: "steps 1e9", args: []string{"-steps", "1000000000"}, stderr: "-steps 1000000000: run too large", tooBig: true},
		{name: "steps MaxInt", args: []string{"-steps", maxInt}, stderr: "-steps " + maxInt},
		{name: "chains MaxInt", args: []string{"-chains", maxInt}, stderr: "-chains " + maxInt + ": at most 65536 chains"},
		{name: "chains MaxInt, sharded", args: []string{"-chains", maxInt, "-shard", "1/2", "-json", "x.json"}, stderr: "-chains " + maxInt},
		{name: "top MaxInt", args: []string{"-top", maxInt}, stderr: "-top " + maxInt},
		{name: "warm-up MaxInt", args: []string{"-warmup", maxInt}, stderr: "-warmup " + maxInt + " + -steps 40000 overflow"},
		{name: "negative warm-up", args: []string{"-warmup", "-1"}, stderr: "-warmup -1"},
		{name: "negative top", args: []string{"-top", "-2"}, stderr: "-top -2"},
		{name: "no top", args: []string{"-top", "0"}, stderr: "-top 0"},
	} {
		if c.tooBig && runs.MemoryLimit() == 0 {
			continue
		}
		var out, errb bytes.Buffer
		args := append([]string{"select", "-quiet", "-data", missing, "-y", "y"}, c.args...)
		code := run(context.Background(), args, &out, &errb, backend{})
		if code != exitUsage || !strings.Contains(errb.String(), c.stderr) || strings.Contains(errb.String(), "Settings.") {
			t.Errorf("%s: exit %d, stderr %q; want exit %d, stderr with %q naming flags", c.name, code, errb.String(), exitUsage, c.stderr)
		}
	}
}

// FuzzSelectCSV fuzzes the CSV reader of trj select -data: it must never
// panic, and what it accepts must be consistent: at least 2 rows, one
// response value and one row of predictors per row, every predictor named
// (uniquely, not the response), not constant, and every value finite and a
// valid response of the family.
func FuzzSelectCSV(f *testing.F) {
	f.Add([]byte("y,x1,x2\n1,0.5,1\n2,0.2,3\n3,0.1,2\n"), "y", uint8(0))
	f.Add([]byte("x1,resp\n0.5,1\n0.2,0\n0.1,1\n"), "resp", uint8(1))
	f.Add([]byte("y,x1\n0,0.5\n3,0.2\n2,0.1\n"), "y", uint8(2))
	f.Add([]byte("y,x1,x1\n1,2,3\n3,4,5\n"), "y", uint8(0))
	f.Add([]byte("y,x1,x2\n1,NA,1\n2,1e300,2\n3,0.1,3\n"), "y", uint8(0))
	f.Add([]byte("\ufeffy;x1\n1;2\n3;4\n"), "y", uint8(0))
	f.Add([]byte("y,\n1,2\n"), "y", uint8(0))
	f.Add([]byte("\"y\",\"x\"\"1\"\n1,2\n3,\"4\"\n"), "y", uint8(2))
	f.Add([]byte("\"\",\"type\",\"x\",\"g\"\n\"a\",Yes,1,A\n\"b\",No,2,B\n\"c\",No,NA,C\n\"d\",Yes,4,A\n"), "type", uint8(9))
	f.Add([]byte("y\tx1\tx2\n1\t0.5\tNo\n2\t0.2\tYes\n3\t.\tYes\n"), "y", uint8(8))
	f.Fuzz(func(t *testing.T, b []byte, yName string, fam uint8) {
		family := selectFamilies()[int(fam)%len(selectFamilies())]
		d, err := parseSelectCSV("fuzz.csv", b, yName, family, naPolicies()[int(fam/8)%len(naPolicies())])
		if err != nil {
			if d != nil {
				t.Fatalf("error %v with data", err)
			}
			return
		}
		n, p := d.X.Dims()
		if n < 2 || p < 1 || len(d.Y) != n || len(d.Names) != p {
			t.Fatalf("%d rows × %d predictors, %d responses, %d names", n, p, len(d.Y), len(d.Names))
		}
		for j, name := range d.Names {
			if name == "" || name == yName || slices.Contains(d.Names[:j], name) {
				t.Fatalf("predictor %d named %q (response %q, names %q)", j, name, yName, d.Names)
			}
			lo, hi := math.Inf(1), math.Inf(-1)
			for i := range n {
				v := d.X.At(i, j)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("predictor %q row %d is %v", name, i, v)
				}
				lo, hi = min(lo, v), max(hi, v)
			}
			if lo == hi {
				t.Fatalf("predictor %q is constant", name)
			}
		}
		for i, y := range d.Y {
			ok := !math.IsNaN(y) && !math.IsInf(y, 0)
			switch family {
			case "logistic":
				ok = y == 0 || y == 1
			case "poisson":
				ok = ok && y >= 0 && y == math.Trunc(y)
			}
			if !ok {
				t.Fatalf("-family %s: response %d is %v", family, i, y)
			}
		}
	})
}
