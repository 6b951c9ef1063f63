package main

import (
	"strings"
	"testing"

	"github.com/trjgo/trj/models/datasets"
)

// utf16File encodes s as UTF-16 little-endian with a byte-order mark.
func utf16File(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, r := range s {
		b = append(b, byte(r), 0)
	}
	return string(b)
}

// TestBadDataFiles gives every command that reads a data file (trj run
// factor and robustvs, trj select, trj sample of a posteriordb model) the
// same bad files: each is refused before any work with an error naming
// the file and what is wrong, through the one reader of package datasets.
func TestBadDataFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeTestFile(t, dir, name, text) }
	embedded := func(name string) string {
		b, err := datasets.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rvs := embedded(datasets.RobustRegression)
	fx := embedded(datasets.ExchangeRates)
	sel := embedded(datasets.SelectLinear)
	// A constant covariate X.3 (the fifth field of every row).
	lines := strings.Split(rvs, "\n")
	for i := 1; i < len(lines); i++ {
		if f := strings.Split(lines[i], ","); len(f) > 4 {
			f[4] = "2"
			lines[i] = strings.Join(f, ",")
		}
	}
	constant := strings.Join(lines, "\n")
	// overflow puts 1e300 into field col of the first row (the last field
	// when col < 0).
	overflow := func(csv string, col int) string {
		ls := strings.SplitN(csv, "\n", 3)
		f := strings.Split(ls[1], ",")
		if col < 0 {
			col = len(f) - 1
		}
		f[col] = "1e300"
		ls[1] = strings.Join(f, ",")
		return strings.Join(ls, "\n")
	}
	const schools = `"J": 8, "y": [28, 8, -3, 7, -1, 1, 18, 12], "sigma": [15, 10, 16, 11, 9, 11, 10, 18]`
	// Small sizes, so that a file wrongly accepted costs seconds.
	runData := func(exp, path string) []string {
		return []string{"run", exp, "-quiet", "-out", dir, "-data", path, "-train-draws", "100", "-bridge-reps", "2", "-train-iters", "5"}
	}
	selData := func(path string) []string { return []string{"select", "-quiet", "-data", path, "-y", "y"} }
	sample := func(path string) []string {
		return []string{"sample", "-quiet", "-model", "eight_schools_centered", "-data", path}
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"robustvs UTF-16", runData("robustvs", write("rvs16.csv", utf16File(rvs))), "rvs16.csv: robustvs: bad data: datasets: bad data file: the file is UTF-16; save it as UTF-8"},
		{"robustvs semicolons", runData("robustvs", write("rvs;.csv", strings.ReplaceAll(rvs, ",", ";"))), "separated by ';'"},
		{"robustvs overflowing datum", runData("robustvs", write("rvsbig.csv", overflow(rvs, 1))), `line 2 column "y": "1e300" is too large`},
		{"robustvs constant covariate", runData("robustvs", write("rvsconst.csv", constant)), "covariate X.3 is constant (2 in every row)"},
		{"factor UTF-16", runData("factor", write("fx16.csv", utf16File(fx))), "fx16.csv: factor: bad data: datasets: bad data file: the file is UTF-16"},
		{"factor semicolons", runData("factor", write("fx;.csv", strings.ReplaceAll(fx, ",", ";"))), "separated by ';'"},
		{"factor overflowing datum", runData("factor", write("fxbig.csv", overflow(fx, -1))), `line 2 column 6 (x6): "1e300" is too large`},
		{"select UTF-16", selData(write("sel16.csv", utf16File(sel))), "sel16.csv: datasets: bad data file: the file is UTF-16"},
		{"select semicolons", selData(write("sel;.csv", strings.ReplaceAll(sel, ",", ";"))), "separated by ';'"},
		{"select overflowing datum", selData(write("selbig.csv", overflow(sel, -1))), `line 2, column "x20": "1e300" is too large`},
		{"sample JSON trailing garbage", sample(write("tg.json", "{"+schools+"}\nxyz")), "tg.json: datasets: bad data file: text after the data object"},
		{"sample two JSON objects", sample(write("two.json", "{"+schools+"}\n{"+schools+"}")), "a second JSON object"},
		{"sample duplicate key", sample(write("dup.json", "{"+schools+`, "y": [1, 2, 3, 4, 5, 6, 7, 8]}`)), `key "y" appears twice`},
		{"sample UTF-16 JSON", sample(write("s16.json", utf16File("{"+schools+"}"))), "the file is UTF-16"},
		{"sample overflowing datum", sample(write("big.json", `{"J": 8, "y": [1e300, 8, -3, 7, -1, 1, 18, 12], "sigma": [15, 10, 16, 11, 9, 11, 10, 18]}`)), `field "y": element 1 is 1e+300: beyond 1e+150`},
	}
	for _, c := range cases {
		code, stdout, stderr := runDefault(c.args...)
		if code != exitFail || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: trj %q: exit %d, stderr %q, stdout %.100q; want exit %d and %q", c.name, c.args, code, stderr, stdout, exitFail, c.want)
		}
	}
	// A byte-order mark is accepted (factor.ReadData and robustvs.ReadData
	// are checked in models/datasets; a full run of either is long).
	bom := write("bom.json", "\ufeff{"+schools+"}")
	code, _, stderr := runDefault("sample", "-quiet", "-model", "eight_schools_centered", "-chains", "1", "-warmup", "20", "-draws", "20",
		"-data", bom)
	if code != exitOK {
		t.Errorf("sample with a byte-order mark in the JSON data: exit %d, %s", code, stderr)
	}
}
