package glmselect_test

import (
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
)

// TestReadDataFactors: a 3-level text column is 2 terms col[level], a
// yes/no column one term with "no" the reference, and Encode encodes new
// rows (columns in another order, no response) the same way.
func TestReadDataFactors(t *testing.T) {
	const text = "y,region,smoker,x\n1.5,south,yes,0.3\n2.1,east,no,1.2\n0.7,north,yes,-0.4\n1.9,east,no,0.8\n3.0,south,no,2.2\n0.2,north,yes,-1.0\n"
	d, err := glmselect.ReadData(strings.NewReader(text), "y", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"region[north]", "region[south]", "smoker[yes]", "x"}; !slices.Equal(d.Names, want) {
		t.Fatalf("names %q, want %q", d.Names, want)
	}
	if !slices.Equal(d.Y, []float64{1.5, 2.1, 0.7, 1.9, 3.0, 0.2}) || d.X.At(0, 1) != 1 || d.X.At(2, 0) != 1 || d.X.At(4, 3) != 2.2 {
		t.Errorf("y %v, x\n%v", d.Y, mat.Formatted(d.X))
	}
	x, err := d.Encode(strings.NewReader("x,smoker,region\n0.5,no,north\n1,yes,east\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := mat.NewDense(2, 4, []float64{1, 0, 0, 0.5, 0, 0, 1, 1}); !mat.Equal(x, w) {
		t.Errorf("Encode:\n%v\nwant\n%v", mat.Formatted(x), mat.Formatted(w))
	}
}

// TestReadDataErrors: the library's errors name its settings as Go
// fields (the CLI's tests check the flag names), the columns by header
// and the rows by line.
func TestReadDataErrors(t *testing.T) {
	for _, c := range []struct {
		name, text, response string
		s                    *glmselect.ReadSettings
		want                 string
	}{
		{"no response", "a,b\n1,2\n3,4\n", "y", nil, `glmselect: the response "y": no such column (columns: a, b)`},
		{"missing", "y,x\n1,2\n2,NA\n3,1\n", "y", nil, `1 row(s) have missing values (NA, empty, NaN, nan or .): line 3 (x); columns with missing values: x. Drop those rows with ReadSettings.Missing = drop`},
		{"binary", "y,x\n1,2\n2,3\n0,1\n", "y", &glmselect.ReadSettings{Family: glmselect.LogisticFamily}, `line 3: ReadSettings.Family = logistic needs the response "y" to be 0 or 1, but it is 2`},
		{"count", "y,x\n1,2\n-1,3\n0,1\n", "y", &glmselect.ReadSettings{Family: glmselect.PoissonFamily}, `ReadSettings.Family = poisson needs the response "y" to be a non-negative integer count, but it is -1`},
		{"text", "y,x\nyes,2\nno,3\n", "y", nil, `the response "y" holds text (values seen: "yes", "no"): ReadSettings.Family = gaussian needs numbers`},
		{"bad family", "y,x\n1,2\n2,3\n", "y", &glmselect.ReadSettings{Family: 7}, `ReadSettings.Family = 7: want gaussian, logistic or poisson`},
		{"bad policy", "y,x\n1,NA\n2,3\n", "y", &glmselect.ReadSettings{Missing: 5}, `ReadSettings.Missing = 5: want refuse or drop`},
		{"bad separator", "y,x\n1,2\n", "y", &glmselect.ReadSettings{Separator: ';'}, `ReadSettings.Separator = ';'`},
		{"typo", "y,x\n1,2\n2,3\n3,three\n", "y", nil, `line 4, column "x": "three" is not a number, while 2 of the column's 3 values are`},
	} {
		if _, err := glmselect.ReadData(strings.NewReader(c.text), c.response, c.s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	d, err := glmselect.ReadData(strings.NewReader("y,x,z\n1,1,5\n2,2,6\n3,NA,7\n4,1,8\n"), "y", &glmselect.ReadSettings{Missing: glmselect.DropMissing})
	if err != nil || d.Dropped != 1 || len(d.Y) != 3 || !strings.HasPrefix(d.Notes[0], "dropped 1 of 4 rows for missing values in x; n is now 3") {
		t.Errorf("drop: %v, %+v", err, d)
	}
}

// TestReadDataUSCrime: the embedded UScrime data read as 47 rows of 15
// named predictors, no notes.
func TestReadDataUSCrime(t *testing.T) {
	f, err := datasets.Open("select/uscrime.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := glmselect.ReadData(f, "y", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, p := d.X.Dims(); n != 47 || p != 15 || d.Names[12] != "Ineq" || len(d.Notes) != 0 {
		t.Errorf("%d × %d, names %q, notes %q", n, p, d.Names, d.Notes)
	}
}
