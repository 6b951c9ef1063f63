package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/datasets"
)

// TestSelectPima: the embedded Pima data, whose response "type" is
// "Yes"/"No", runs with -family logistic; Yes is 1.
func TestSelectPima(t *testing.T) {
	raw, err := datasets.ReadFile("select/pima.csv")
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseSelectCSV("embedded:select/pima.csv", raw, "type", "logistic", "refuse")
	if err != nil {
		t.Fatal(err)
	}
	yes := strings.Count(string(raw), "\"Yes\"")
	if n, ones := len(d.Y), int(sum64(d.Y)); n != 532 || ones != yes || !slices.Equal(d.Names, []string{"npreg", "glu", "bp", "skin", "bmi", "ped", "age"}) {
		t.Errorf("pima: n %d, %d ones (want 532, %d), names %q", n, ones, yes, d.Names)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"select", "-quiet", "-data", "embedded:select/pima.csv", "-y", "type", "-family", "logistic", "-steps", "200", "-warmup", "100", "-chains", "2"}, &out, &errb, backend{})
	if code != exitOK || !strings.Contains(out.String(), "glu") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if strings.Contains(errb.String(), "note:") {
		t.Errorf("notes on pima: %q", errb.String())
	}
	for _, fam := range []string{"gaussian", "poisson"} {
		if _, err := parseSelectCSV("pima.csv", raw, "type", fam, "refuse"); err == nil || !strings.Contains(err.Error(), `the response "type" holds text (values seen: "No", "Yes"): -family `+fam+" needs numbers") {
			t.Errorf("%s: %v", fam, err)
		}
	}
}

func sum64(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// factorCSV is a small data set with a 3-level text column "region", a
// yes/no column "smoker" and a numeric one.
const factorCSV = `y,region,smoker,x
1.5,south,yes,0.3
2.1,east,no,1.2
0.7,north,yes,-0.4
1.9,east,no,0.8
3.0,south,no,2.2
0.2,north,yes,-1.0
`

// TestSelectFactor: a text column of 3 levels is 2 terms col[level] with
// the first level in order as the reference; a yes/no column is one term
// with "no" the reference; a second table is encoded the same way, an
// unknown level being an error naming it.
func TestSelectFactor(t *testing.T) {
	d, err := parseSelectCSV("f.csv", []byte(factorCSV), "y", "gaussian", "refuse")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"region[north]", "region[south]", "smoker[yes]", "x"}; !slices.Equal(d.Names, want) {
		t.Fatalf("names %q, want %q", d.Names, want)
	}
	want := mat.NewDense(6, 4, []float64{
		0, 1, 1, 0.3,
		0, 0, 0, 1.2,
		1, 0, 1, -0.4,
		0, 0, 0, 0.8,
		0, 1, 0, 2.2,
		1, 0, 1, -1.0,
	})
	if !mat.Equal(d.X, want) {
		t.Errorf("x =\n%v\nwant\n%v", mat.Formatted(d.X), mat.Formatted(want))
	}
	notes := strings.Join(d.Notes, "\n")
	for _, s := range []string{`column "region" is text with 3 levels: its 2 levels but the reference "east" are 2 separate terms (region[north], region[south])`, `column "smoker" is text: its term smoker[yes] is 1 where it is "yes", 0 where "no"`} {
		if !strings.Contains(notes, s) {
			t.Errorf("notes %q lack %q", notes, s)
		}
	}
	// New data, columns in another order, the response absent.
	x, err := d.Encode(strings.NewReader("x,smoker,region\n0.5,no,north\n1,yes,east\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := mat.NewDense(2, 4, []float64{1, 0, 0, 0.5, 0, 0, 1, 1}); !mat.Equal(x, w) {
		t.Errorf("Encode:\n%v\nwant\n%v", mat.Formatted(x), mat.Formatted(w))
	}
	for _, c := range []struct{ text, want string }{
		{"x,smoker,region\n0.5,no,north\n1,yes,west\n", `line 3, column "region": level "west" is not one of the training data's ("east", "north", "south")`},
		{"x,region\n0.5,north\n", `no column "smoker"`},
		{",x,smoker,region\nBob,0.5,no,NA\n", `row "Bob" (line 2), column "region": missing value "NA"`},
	} {
		if _, err := d.Encode(strings.NewReader(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Encode(%q): %v, want %q", c.text, err, c.want)
		}
	}
	// The reference of a 2-level column is No or FALSE when present, else
	// the first level in order.
	for _, c := range []struct{ levels, term string }{{"Yes,No", "s[Yes]"}, {"FALSE,TRUE", "s[TRUE]"}, {"b,a", "s[b]"}, {"Nein,Ja", "s[Nein]"}} {
		l := strings.Split(c.levels, ",")
		text := fmt.Sprintf("y,s,x\n1,%s,1\n2,%s,3\n3,%s,2\n", l[0], l[1], l[0])
		d, err := parseSelectCSV("s.csv", []byte(text), "y", "gaussian", "refuse")
		if err != nil || d.Names[0] != c.term {
			t.Errorf("levels %s: %v, names %q, want %s", c.levels, err, d.Names, c.term)
		}
	}
}

// TestSelectDataErrors: text in a column of numbers, an identifier, a
// constant text column, a column constant only once rows are dropped, and
// term names that clash are refused, naming the column by its header.
func TestSelectDataErrors(t *testing.T) {
	var ids strings.Builder
	ids.WriteString("y,id,x\n")
	for i := range 12 {
		fmt.Fprintf(&ids, "%d,person%d,%d\n", i, i, i%3)
	}
	for _, c := range []struct{ name, text, na, want string }{
		{"typo in numbers", "y,x\n1,2\n2,3\n3,three\n", "refuse", `line 4, column "x": "three" is not a number, while 2 of the column's 3 values are`},
		{"identifier", ids.String(), "refuse", `column "id" holds a different text in every row ("person0", "person1", "person2", … (9 more)): an identifier`},
		{"constant text", "y,g,x\n1,a,1\n2,a,2\n", "refuse", `column "g" is constant ("a" in every row)`},
		{"constant after drop", "y,x,z\n1,1,5\n2,1,6\n3,NA,7\n4,1,NA\n", "drop", `column "x" is constant (1 in every row once the 2 rows with missing values are dropped)`},
		{"clashing names", "y,g,g[b]\n1,a,1\n2,b,2\n3,a,3\n", "refuse", `two terms are named "g[b]"`},
		{"unnamed column", "y,,x\n1,2,3\n2,3,4\n", "refuse", `the column after "y" has no name`},
		{"unnamed first column with a gap", ",y,x\na,1,3\n,2,4\n", "refuse", `the first column has no name in the header (a column of row names needs a value in every row)`},
		{"text response for logistic", "y,x\nyes,1\nmaybe,2\n", "refuse", `the response "y" holds text (values seen: "yes", "maybe"): -family logistic needs 0 and 1, or Yes/No, TRUE/FALSE, Y/N`},
	} {
		fam := "gaussian"
		if strings.Contains(c.name, "logistic") {
			fam = "logistic"
		}
		if _, err := parseSelectCSV("e.csv", []byte(c.text), "y", fam, c.na); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Every response spelling of a binary outcome.
	d, err := parseSelectCSV("b.csv", []byte("y,x\nTRUE,1\nfalse,2\nY,3\nn,1\nYes,2\nNO,3\n"), "y", "logistic", "refuse")
	if err != nil || !slices.Equal(d.Y, []float64{1, 0, 1, 0, 1, 0}) {
		t.Errorf("binary texts: %v, y %v", err, d.Y)
	}
}

// naCSV is selectCSV's gaussian data with missing values in 7 rows.
func naCSV(t *testing.T, dir string) string {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	b.WriteString("x1,resp,x2,x3\n")
	missing := []string{"NA", "", "NaN", "nan", "."}
	for i := range 40 {
		f := []string{fmt.Sprintf("%.4f", r.NormFloat64()), fmt.Sprintf("%.4f", r.NormFloat64()), fmt.Sprintf("%.4f", r.NormFloat64()), fmt.Sprintf("%.4f", r.NormFloat64())}
		if i%6 == 1 {
			f[(i/6)%4] = missing[i%5]
		}
		b.WriteString(strings.Join(f, ",") + "\n")
	}
	return writeTestFile(t, dir, "na.csv", b.String())
}

// TestSelectMissing: missing values are refused by default, naming five
// rows by line and the columns; -na drop drops the rows and says so.
func TestSelectMissing(t *testing.T) {
	dir := t.TempDir()
	data := naCSV(t, dir)
	args := []string{"select", "-quiet", "-data", data, "-y", "resp", "-chains", "1", "-warmup", "20", "-steps", "50"}
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, backend{})
	want := `7 row(s) have missing values (NA, empty, NaN, nan or .): line 3 (x1), line 9 (resp), line 15 (x2), line 21 (x3), line 27 (x1), … (2 more); columns with missing values: x1, resp, x2, x3. Drop those rows with -na drop`
	if code != exitFail || !strings.Contains(errb.String(), want) {
		t.Errorf("refuse: exit %d, stderr %q, want %q", code, errb.String(), want)
	}
	out.Reset()
	errb.Reset()
	code = run(context.Background(), append(args, "-na", "drop"), &out, &errb, backend{})
	if code != exitOK || !strings.Contains(errb.String(), "trj select: note: -na drop: dropped 7 of 40 rows for missing values in x1, resp, x2, x3; n is now 33") {
		t.Errorf("drop: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), append(args, "-na", "impute"), &out, &errb, backend{}); code != exitUsage || !strings.Contains(errb.String(), `-na "impute": want one of refuse, drop`) {
		t.Errorf("-na impute: exit %d, stderr %q", code, errb.String())
	}
}

// TestSelectTSVAndRowNames: the same data as a tab-separated file (named
// .tsv, or detected by its header) and as R's write.csv writes them, with
// row names, read the same numbers as the plain CSV; row names name the
// rows in messages.
func TestSelectTSVAndRowNames(t *testing.T) {
	plain := "y,x1,g\n1.5,0.25,a\n2,-1,b\n0.5,3e-2,a\n"
	rowNames := "\"\",\"y\",\"x1\",\"g\"\n\"Alabama\",1.5,0.25,\"a\"\n\"Alaska\",2,-1,\"b\"\n\"Arizona\",0.5,3e-2,\"a\"\n"
	tsv := strings.ReplaceAll(plain, ",", "\t")
	ref, err := parseSelectCSV("plain.csv", []byte(plain), "y", "gaussian", "refuse")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, text string }{{"d.tsv", tsv}, {"d.txt", tsv}, {"d.TSV", "y\tx1\tg\n1.5\t0.25\ta\n2\t-1\tb\n0.5\t3e-2\ta\n"}, {"r.csv", rowNames}} {
		d, err := parseSelectCSV(c.path, []byte(c.text), "y", "gaussian", "refuse")
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if !slices.Equal(d.Y, ref.Y) || !mat.Equal(d.X, ref.X) || !reflect.DeepEqual(d.Names, ref.Names) {
			t.Errorf("%s: y %v x %v names %q; want %v %v %q", c.path, d.Y, mat.Formatted(d.X), d.Names, ref.Y, mat.Formatted(ref.X), ref.Names)
		}
	}
	d, _ := parseSelectCSV("r.csv", []byte(rowNames), "y", "gaussian", "refuse")
	if !slices.Equal(d.RowNames, []string{"Alabama", "Alaska", "Arizona"}) {
		t.Errorf("labels %q", d.RowNames)
	}
	bad := strings.Replace(rowNames, "\"Alaska\",2", "\"Alaska\",NA", 1)
	if _, err := parseSelectCSV("r.csv", []byte(bad), "y", "gaussian", "refuse"); err == nil || !strings.Contains(err.Error(), `row "Alaska" (line 3) (y)`) {
		t.Errorf("row names in messages: %v", err)
	}
	// A .tsv file is read with tabs even when its header has one column
	// name with a comma.
	if d, err := parseSelectCSV(filepath.Join("x", "d.tsv"), []byte("y\tx,1\n1\t2\n2\t5\n"), "y", "gaussian", "refuse"); err != nil || d.Names[0] != "x,1" {
		t.Errorf("tsv with a comma in a name: %v", err)
	}
}

// TestSelectCollinearNote: exact copies and a combination are named by
// their headers before the run, which goes on.
func TestSelectCollinearNote(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var b strings.Builder
	b.WriteString("y,x1,x2,x3,x4,x5,x6\n")
	for range 30 {
		x1, x2, x4 := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		fmt.Fprintf(&b, "%g,%g,%g,%g,%g,%g,%g\n", x1+r.NormFloat64(), x1, x2, x1+2*x2, x4, 2*x4+1, x4)
	}
	data := writeTestFile(t, t.TempDir(), "c.csv", b.String())
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"select", "-quiet", "-data", data, "-y", "y", "-chains", "1", "-warmup", "20", "-steps", "50"}, &out, &errb, backend{})
	for _, s := range []string{"note: exactly collinear terms: a model holding a whole set below has a singular design", "note: x4, x5 and x6 are exact copies (up to scale and shift)", "note: x3 = an exact linear combination of x1, x2 (and the intercept)"} {
		if !strings.Contains(errb.String(), s) {
			t.Errorf("stderr %q lacks %q", errb.String(), s)
		}
	}
	if code != exitOK {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// TestSelectWideNote: more terms than observations is noted, not refused.
func TestSelectWideNote(t *testing.T) {
	d, err := parseSelectCSV("w.csv", []byte("y,a,b,c,e\n1,1,4,2,0\n2,3,1,5,1\n4,2,2,2,7\n"), "y", "gaussian", "refuse")
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(d.Notes, "\n"); !strings.Contains(notes, "4 terms and 3 observations: any model of more than 2 terms has a singular design") {
		t.Errorf("notes %q", notes)
	}
}
