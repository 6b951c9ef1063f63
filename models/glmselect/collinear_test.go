package glmselect_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
)

// TestCollinearSets: exact copies (plain, and scaled and shifted), a
// combination x3 = x1 + 2 x2, and a constant column are found, each with
// the columns that express it; independent columns give nothing.
func TestCollinearSets(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 30
	X := mat.NewDense(n, 8, nil)
	for i := range n {
		x0, x1, x2, x5 := r.NormFloat64(), r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		// Columns: 0 x0, 1 x1, 2 x2, 3 = x1 + 2 x2 + 5, 4 = copy of 0,
		// 5 independent, 6 = -2.5 x5 + 7 (scaled and shifted copy), 7 constant.
		X.SetRow(i, []float64{x0, x1, x2, x1 + 2*x2 + 5, x0, x5, -2.5*x5 + 7, 4})
	}
	got := glmselect.CollinearSets(X)
	want := [][]int{{1, 2, 3}, {0, 4}, {5, 6}, {7}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CollinearSets = %v, want %v", got, want)
	}
	// A combination that is not exact (noise at 1e-6 of its scale) is
	// not reported.
	for i := range n {
		X.Set(i, 3, X.At(i, 3)+1e-6*r.NormFloat64())
	}
	if got := glmselect.CollinearSets(X); !reflect.DeepEqual(got, [][]int{{0, 4}, {5, 6}, {7}}) {
		t.Errorf("with x3 inexact: %v", got)
	}
	// Independent columns, and more columns than the centred rank
	// (p ≥ n − 1): only copies are reported beyond the rank.
	wide := mat.NewDense(6, 9, nil)
	for i := range 6 {
		for j := range 8 {
			wide.Set(i, j, r.NormFloat64())
		}
		wide.Set(i, 8, 3*wide.At(i, 7)-1)
	}
	if got := glmselect.CollinearSets(wide); !reflect.DeepEqual(got, [][]int{{7, 8}}) {
		t.Errorf("wide: %v", got)
	}
	if got := glmselect.CollinearSets(wide.Slice(0, 6, 0, 4)); got != nil {
		t.Errorf("independent: %v", got)
	}
}

// TestCollinearSetsRealData: the predictors of UScrime (15) and of FLS
// (41) hold no exact collinearity, so trj select prints no note on them.
func TestCollinearSetsRealData(t *testing.T) {
	for _, name := range []string{"select/uscrime.csv", "select/fls.csv"} {
		b, err := datasets.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := datasets.ReadCSV(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		X := mat.NewDense(len(tab.Rows), len(tab.Header)-1, nil)
		for i, rec := range tab.Rows {
			for j, s := range rec[1:] { // column 0 is y
				v, err := datasets.ParseDatum(s)
				if err != nil {
					t.Fatal(err)
				}
				X.Set(i, j, v)
			}
		}
		if got := glmselect.CollinearSets(X); got != nil {
			t.Errorf("%s: %v", name, got)
		}
	}
}

// BenchmarkCollinearSets is the genotype-sized case: n = 574, p = 1,000,
// a tenth of the columns copies.
func BenchmarkCollinearSets(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, p = 574, 1000
	X := mat.NewDense(n, p, nil)
	for j := range p {
		for i := range n {
			if j%10 == 9 {
				X.Set(i, j, X.At(i, j-9))
			} else {
				X.Set(i, j, float64(r.IntN(3)))
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		if sets := glmselect.CollinearSets(X); len(sets) != p/10 {
			b.Fatalf("%d sets, want the %d copies", len(sets), p/10)
		}
	}
}
