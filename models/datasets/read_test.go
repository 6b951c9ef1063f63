package datasets_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/trjgo/trj/internal/checks"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/factor"
	"github.com/trjgo/trj/models/robustvs"
)

// TestBadInputsCSV: every CSV reader of the data files (ReadCSV and the
// models reading through it) accepts a byte-order mark and names UTF-16,
// semicolons, ragged rows and data that overflow the likelihood.
func TestBadInputsCSV(t *testing.T) {
	const good = "y,X.1,X.2,X.3,X.4\n1,1,0.5,0.25,2\n2,1,0.1,0.2,0.3\n"
	readers := map[string]func(string) error{
		"ReadCSV":           func(s string) error { _, err := datasets.ReadCSV(strings.NewReader(s)); return err },
		"factor.ReadData":   func(s string) error { _, err := factor.ReadData(strings.NewReader(s)); return err },
		"robustvs.ReadData": func(s string) error { _, err := robustvs.ReadData(strings.NewReader(s)); return err },
	}
	cases := []struct {
		name, text string
		want       string // "" when the file is fine
	}{
		{"plain", good, ""},
		{"UTF-8 byte-order mark", "\ufeff" + good, ""},
		{"CRLF line ends", strings.ReplaceAll(good, "\n", "\r\n"), ""},
		{"UTF-16", checks.UTF16(good), "UTF-16; save it as UTF-8"},
		{"UTF-16 without a mark", checks.UTF16(good)[2:], "UTF-16 or not text"},
		{"semicolons", strings.ReplaceAll(good, ",", ";"), "separated by ';'"},
		{"semicolons and decimal commas", "y;X.1;X.2;X.3;X.4\n1,5;1;0,5;0,25;2\n", "separated by ';'"},
		{"ragged row", good + "3,1,2\n", "line 4: wrong number of fields: 3, the header has 5"},
		{"empty", "", "empty file"},
		{"overflowing datum", good + "1e300,1,0,0,0\n", `"1e300" is too large`},
		{"negative overflowing datum", good + "1,1,0,-1e200,0\n", `"-1e200" is too large`},
		{"beyond float64", good + "1e400,1,0,0,0\n", `"1e400" is not a finite number`},
		{"NaN", good + "NaN,1,0,0,0\n", `"NaN" is not a finite number`},
		{"missing value", good + "NA,1,0,0,0\n", `"NA" is not a number`},
	}
	for _, c := range cases {
		for rname, read := range readers {
			if rname == "ReadCSV" && isDatumCase(c.name) {
				continue // ReadCSV splits fields; the models parse them
			}
			err := read(c.text)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s, %s: %v", c.name, rname, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s, %s: error %v, want one with %q", c.name, rname, err, c.want)
			}
		}
	}
}

// isDatumCase reports whether the case is about one number, which
// ReadCSV leaves to its callers.
func isDatumCase(name string) bool {
	return strings.Contains(name, "datum") || name == "beyond float64" || name == "NaN" || name == "missing value"
}

// TestBadInputsJSON: ReadJSONObject takes exactly one object with distinct
// keys, with or without a byte-order mark.
func TestBadInputsJSON(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"object", `{"N": 2, "y": [1, 2]}`, ""},
		{"byte-order mark", "\ufeff{\"N\": 2}\n", ""},
		{"trailing newline and spaces", "{\"N\": 2}\n  \n", ""},
		{"trailing garbage", `{"N": 2} xyz`, `text after the data object at byte 8 ("xyz")`},
		{"two objects", `{"N": 2}{"N": 3}`, "a second JSON object"},
		{"duplicate key", `{"y": [1], "N": 1, "y": [2]}`, `key "y" appears twice`},
		{"nested duplicate key", `{"a": [{"b": 1, "b": 2}]}`, `key "a[0].b" appears twice`},
		{"array", `[1, 2]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"UTF-16", checks.UTF16(`{"N": 2}`), "UTF-16"},
		{"truncated", `{"N": `, "not a JSON object"},
	}
	for _, c := range cases {
		_, err := datasets.ReadJSONObject(strings.NewReader(c.text))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, datasets.ErrFormat)):
			t.Errorf("%s: error %v, want datasets.ErrFormat with %q", c.name, err, c.want)
		}
	}
}

// TestReadGzip: a gzip stream reads as the text it holds, known by its
// magic bytes, and a damaged one is ErrFormat naming gzip; the embedded
// N3finemapping set is such a stream.
func TestReadGzip(t *testing.T) {
	plain := "y,x\n1,2\n3,4\n"
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(plain)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := datasets.ReadCSV(strings.NewReader(plain))
	if err != nil {
		t.Fatal(err)
	}
	got, err := datasets.ReadCSV(bytes.NewReader(buf.Bytes()))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("gzip: %+v, %v; want %+v", got, err, want)
	}
	cut := buf.Bytes()[:buf.Len()-6]
	if _, err := datasets.ReadCSV(bytes.NewReader(cut)); !errors.Is(err, datasets.ErrFormat) || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("truncated gzip: %v, want ErrFormat naming gzip", err)
	}
	f, err := datasets.Open(datasets.FineMapping)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n3, err := datasets.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(n3.Rows) != 574 || len(n3.Header) != 1002 || n3.Header[0] != "y" || n3.Header[1001] != "v1001" {
		t.Errorf("N3finemapping: %d rows, %d columns (%s … %s); want 574 rows, y and v1..v1001", len(n3.Rows), len(n3.Header), n3.Header[0], n3.Header[len(n3.Header)-1])
	}
}
