package selection_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/selection"
)

// readSelectLogistic reads the embedded logistic p = 15 data set (first
// column the 0/1 response) and its reference PIPs, computed without trj's
// samplers by bench/selectref (importance sampling per model).
func readSelectLogistic(t *testing.T) (X *mat.Dense, y, pip, pipSE []float64) {
	t.Helper()
	b, err := datasets.ReadFile(datasets.SelectLogistic)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	n, p := len(rows)-1, len(rows[0])-1
	X = mat.NewDense(n, p, nil)
	y = make([]float64, n)
	for i, row := range rows[1:] {
		for j, cell := range row {
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				t.Fatalf("row %d: %v", i+2, err)
			}
			if j == 0 {
				y[i] = v
			} else {
				X.Set(i, j-1, v)
			}
		}
	}
	rb, err := datasets.ReadFile("select/logistic_p15_is.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		P     int       `json:"p"`
		PIP   []float64 `json:"pip"`
		PIPSE []float64 `json:"pip_se"`
	}
	if err := json.Unmarshal(rb, &ref); err != nil {
		t.Fatal(err)
	}
	if ref.P != p || len(ref.PIP) != p || len(ref.PIPSE) != p {
		t.Fatalf("reference has p = %d and %d PIPs; the data have %d predictors", ref.P, len(ref.PIP), p)
	}
	return X, y, ref.PIP, ref.PIPSE
}

// TestSelectLogisticP15 runs Select with the default proposals on the
// logistic p = 15 problem (32,768 models, no closed-form evidence) and
// checks every PIP against the importance-sampling reference within 4
// standard errors of the difference (the chains' MCSE and the reference's
// SE combined).
func TestSelectLogisticP15(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical test of about 10 CPU-seconds; run without -short")
	}
	X, y, want, wantSE := readSelectLogistic(t)
	sp, err := glmselect.Logistic(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := selection.Run(context.Background(), sp, &selection.Settings{Seed: 3, Steps: 10000})
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for j, e := range res.PIP {
		if !e.Mixed {
			// A term never (or always) included in every chain: its PIP is
			// 0 or 1 with no MCSE; the reference must agree to the
			// resolution of the kept steps.
			if math.Abs(e.P-want[j]) > 3/float64(res.Steps)+4*wantSE[j] {
				t.Errorf("%s: constant PIP %g, reference %g ± %g", res.Names[j], e.P, want[j], wantSE[j])
			}
			continue
		}
		z := (e.P - want[j]) / math.Hypot(e.MCSE, wantSE[j])
		worst = max(worst, math.Abs(z))
		if math.Abs(z) > 4 {
			t.Errorf("%s: PIP %.4f ± %.4f, reference %.4f ± %.4f (z = %.2f)", res.Names[j], e.P, e.MCSE, want[j], wantSE[j], z)
		}
	}
	t.Logf("largest |z| %.2f over %d terms, %d kept steps", worst, len(res.PIP), res.Steps)

	fig := filepath.Join(t.TempDir(), "pips.png")
	if err := res.WriteFigure(fig, want...); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fig); err != nil || fi.Size() == 0 {
		t.Fatalf("figure not written: %v", err)
	}
	if err := res.WriteFigure(fig, want[:3]...); err == nil {
		t.Error("WriteFigure accepted 3 reference PIPs for 15 terms")
	}
}
