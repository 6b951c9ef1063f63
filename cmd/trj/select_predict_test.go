package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSelectPredict: -predict reads new rows by header (in another column
// order, the response present and ignored) and -predictions writes one row
// each with the mean inside its 95% interval; the logistic family's are
// probabilities. A missing column and an unwritable -predictions are
// refused before the run, naming the cause.
func TestSelectPredict(t *testing.T) {
	dir := t.TempDir()
	for _, family := range []string{"gaussian", "logistic"} {
		data := selectCSV(t, dir, family)
		newRows := writeTestFile(t, dir, "new.csv", "x3,x2,resp,x1\n0,0,1,-2\n0,0,0,0\n0.5,-0.5,9,2\n")
		out := filepath.Join(dir, family+"-pred.csv")
		var stdout, stderr bytes.Buffer
		code := runSelect(context.Background(), []string{"-data", data, "-y", "resp", "-family", family, "-steps", "600", "-warmup", "100",
			"-quiet", "-predict", newRows, "-predictions", out}, &stdout, &stderr)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", family, code, stderr.String())
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 4 || strings.Join(recs[0], ",") != "row,mean,lower,upper,mean_mcse" {
			t.Fatalf("%s: predictions file %q", family, recs)
		}
		var means []float64
		for _, r := range recs[1:] {
			v := make([]float64, 5)
			for k := range v {
				v[k], _ = strconv.ParseFloat(r[k], 64)
			}
			if !(v[2] <= v[1] && v[1] <= v[3] && v[4] > 0) {
				t.Errorf("%s: row %q: want lower ≤ mean ≤ upper and a positive MCSE", family, r)
			}
			if family == "logistic" && !(v[2] >= 0 && v[3] <= 1) {
				t.Errorf("logistic: row %q is not a probability", r)
			}
			means = append(means, v[1])
		}
		// y rises with x1 (the data's effect 1.5): -2, 0, 2 in the new rows.
		if !(means[0] < means[1] && means[1] < means[2]) {
			t.Errorf("%s: predictions %v do not rise with x1", family, means)
		}
		if !strings.Contains(stdout.String(), "Model-averaged coefficients") || !strings.Contains(stdout.String(), "mean[3]") {
			t.Errorf("%s: table without coefficients or predictions:\n%s", family, stdout.String())
		}
	}
	data := selectCSV(t, dir, "gaussian")
	missing := writeTestFile(t, dir, "missing.csv", "x1,x3\n0,0\n")
	var stdout, stderr bytes.Buffer
	code := runSelect(context.Background(), []string{"-data", data, "-y", "resp", "-quiet", "-predict", missing, "-predictions", filepath.Join(dir, "p.csv")}, &stdout, &stderr)
	if code == exitOK || !strings.Contains(stderr.String(), "x2") || strings.Contains(stdout.String(), "Variable selection") {
		t.Errorf("a missing column: exit %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	code = runSelect(context.Background(), []string{"-data", data, "-y", "resp", "-quiet", "-predict", missing, "-predictions", filepath.Join(dir, "no", "\x00", "p.csv")}, &stdout, &stderr)
	if code == exitOK || !strings.Contains(stderr.String(), "-predictions") {
		t.Errorf("an unwritable -predictions: exit %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if code := runSelect(context.Background(), []string{"-data", data, "-y", "resp", "-predictions", "x.csv"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("-predictions without -predict: exit %d, stderr %q", code, stderr.String())
	}
}
