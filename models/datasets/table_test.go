package datasets_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/trjgo/trj/models/datasets"
)

// TestReadTabsAndRowNames: a tab-separated file (ReadTSV, or ReadCSV
// seeing tabs in the header) and a file with R's row names read as the
// plain CSV, the row names in Labels naming the rows.
func TestReadTabsAndRowNames(t *testing.T) {
	plain := "y,x 1,g\n1.5,0.25,a b\n2,-1,\"c\"\n"
	want, err := datasets.ReadCSV(strings.NewReader(plain))
	if err != nil {
		t.Fatal(err)
	}
	tsv := "y\tx 1\tg\n1.5\t0.25\ta b\n2\t-1\t\"c\"\n"
	for name, read := range map[string]func() (*datasets.Table, error){
		"ReadTSV":         func() (*datasets.Table, error) { return datasets.ReadTSV(strings.NewReader(tsv)) },
		"ReadCSV of tabs": func() (*datasets.Table, error) { return datasets.ReadCSV(strings.NewReader(tsv)) },
		"ReadCSV of tabs, CRLF": func() (*datasets.Table, error) {
			return datasets.ReadCSV(strings.NewReader(strings.ReplaceAll(tsv, "\n", "\r\n")))
		},
	} {
		got, err := read()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, want)
		}
	}
	// An empty field between tabs is an empty field, not skipped space.
	if got, err := datasets.ReadTSV(strings.NewReader("a\tb\tc\n1\t\t3\n")); err != nil || !reflect.DeepEqual(got.Rows, [][]string{{"1", "", "3"}}) {
		t.Errorf("empty TSV field: %v, %v", got, err)
	}
	named, err := datasets.ReadCSV(strings.NewReader("\"\",\"y\",\"x 1\",\"g\"\n\"r1\",1.5,0.25,\"a b\"\n\"r2\",2,-1,\"c\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(named.Header, want.Header) || !reflect.DeepEqual(named.Rows, want.Rows) || !reflect.DeepEqual(named.Labels, []string{"r1", "r2"}) {
		t.Errorf("row names: %+v", named)
	}
	if got := named.Row(1); got != `row "r2" (line 3)` {
		t.Errorf("Row(1) = %q", got)
	}
	if got := want.Row(1); got != "line 3" {
		t.Errorf("Row(1) without labels = %q", got)
	}
	// An empty first header field over an empty value is not row names.
	gap, err := datasets.ReadCSV(strings.NewReader(",y\nr1,1\n,2\n"))
	if err != nil || gap.Labels != nil || gap.Header[0] != "" {
		t.Errorf("gap in row names: %+v, %v", gap, err)
	}
	for _, s := range []string{"NA", "", "NaN", "nan", ".", " NA "} {
		if !datasets.IsMissing(s) {
			t.Errorf("IsMissing(%q) = false", s)
		}
	}
	for _, s := range []string{"0", "na", "N/A", "-", "Inf"} {
		if datasets.IsMissing(s) {
			t.Errorf("IsMissing(%q) = true", s)
		}
	}
}
