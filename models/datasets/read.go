package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrFormat is returned (wrapped) for a data file that cannot be read as
// the text it should be: UTF-16, semicolon-separated, malformed CSV, or
// JSON that is not exactly one object with distinct keys.
var ErrFormat = errors.New("datasets: bad data file")

// MaxDatum is the largest magnitude ParseDatum accepts. The models square
// their data (normal and mixture likelihoods, covariances), and a datum
// beyond about 1.3e154 squares to +Inf, which would make every likelihood
// non-finite and the failure surface far from its cause.
const MaxDatum = 1e150

// maxFile bounds what the readers take from a reader, so that a wrong
// file is an error, not the machine's memory.
const maxFile = 1 << 30

// Text returns the bytes of a text data file as UTF-8: a UTF-8
// byte-order mark is dropped; UTF-16 (with or without a byte-order mark)
// and other text with NUL bytes are refused with what to do.
func Text(b []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}), bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return nil, fmt.Errorf("%w: the file is UTF-16; save it as UTF-8", ErrFormat)
	case bytes.IndexByte(b, 0) >= 0:
		return nil, fmt.Errorf("%w: the file has NUL bytes: it is UTF-16 or not text; save it as UTF-8", ErrFormat)
	}
	return bytes.TrimPrefix(b, []byte("\ufeff")), nil
}

// readText reads r whole and returns it as UTF-8 (Text). A gzip stream
// (known by its magic bytes, whatever the file is called) is read
// through: wide data such as genotypes compress tenfold, and this is the
// one place every table reader (ReadCSV, ReadTSV, so glmselect.ReadData
// and trj select's -data) passes.
func readText(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrFormat, maxFile)
	}
	if bytes.HasPrefix(b, []byte(gzipMagic)) {
		if b, err = gunzip(b); err != nil {
			return nil, err
		}
	}
	return Text(b)
}

// gzipMagic opens every gzip stream (RFC 1952: ID1, ID2).
const gzipMagic = "\x1f\x8b"

// gunzip decompresses a gzip stream, at most maxFile bytes of it, so that
// a small file cannot expand into the machine's memory.
func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: gzip: %v", ErrFormat, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("%w: gzip: %v (a truncated or damaged .gz file)", ErrFormat, err)
	}
	if len(out) > maxFile {
		return nil, fmt.Errorf("%w: larger than %d bytes once decompressed", ErrFormat, maxFile)
	}
	return out, nil
}

// Table is a CSV data file: the header row, then the data rows with the
// line each starts on (for error messages).
type Table struct {
	Header []string
	Rows   [][]string
	Lines  []int
	// Labels are the rows' names when the file has them, as R's
	// write.csv writes them: a first column with an empty header field
	// and a value in every row. They are not data, so that column is in
	// neither Header nor Rows; nil when the file has no row names.
	Labels []string
}

// Row names row i of t in messages: by its label when the file has row
// names (users know their rows by them), else by its line in the file.
func (t *Table) Row(i int) string {
	if t.Labels != nil {
		return fmt.Sprintf("row %q (line %d)", t.Labels[i], t.Lines[i])
	}
	return fmt.Sprintf("line %d", t.Lines[i])
}

// ReadCSV reads a comma-separated data file with a header row: a UTF-8
// byte-order mark is accepted, UTF-16 and semicolon separators are named,
// and a row with another number of fields than the header is an error
// naming its line. A header that splits into more fields at tabs than at
// commas is read as tab-separated, as ReadTSV reads it. Header names and
// fields are trimmed of spaces; row names (R's write.csv) go to Labels.
func ReadCSV(r io.Reader) (*Table, error) { return readTable(r, 0) }

// ReadTSV reads a tab-separated data file (a .tsv file, or what
// spreadsheets copy) as ReadCSV reads a comma-separated one.
func ReadTSV(r io.Reader) (*Table, error) { return readTable(r, '\t') }

// readTable reads a delimited data file with the separator sep, or the
// one its header line shows when sep is 0.
func readTable(r io.Reader, sep rune) (*Table, error) {
	b, err := readText(r)
	if err != nil {
		return nil, err
	}
	head, _, _ := bytes.Cut(b, []byte("\n"))
	if sep == 0 {
		sep = ','
		if bytes.ContainsRune(head, '\t') && fields(head, '\t') > fields(head, ',') {
			sep = '\t'
		}
	}
	if sep == ',' && bytes.ContainsRune(head, ';') && fields(head, ';') > fields(head, ',') {
		return nil, fmt.Errorf("%w: line 1: the fields are separated by ';', not ','; save the file as comma-separated CSV with '.' as the decimal point", ErrFormat)
	}
	cr := csv.NewReader(bytes.NewReader(b))
	cr.Comma = sep
	cr.FieldsPerRecord = -1
	// Spaces after a comma may precede a quoted field; a tab is itself
	// white space, so tab-separated fields are only trimmed below.
	cr.TrimLeadingSpace = sep != '\t'
	t := &Table{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, csvError(err))
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		line, _ := cr.FieldPos(0)
		if t.Header == nil {
			t.Header = rec
			continue
		}
		if len(rec) != len(t.Header) {
			return nil, fmt.Errorf("%w: line %d: wrong number of fields: %d, the header has %d", ErrFormat, line, len(rec), len(t.Header))
		}
		t.Rows = append(t.Rows, rec)
		t.Lines = append(t.Lines, line)
	}
	if t.Header == nil {
		return nil, fmt.Errorf("%w: empty file (want a header row, then one row per observation)", ErrFormat)
	}
	t.rowNames()
	return t, nil
}

// rowNames moves a row-name column (an empty first header field, a value
// in every row) from the data to Labels.
func (t *Table) rowNames() {
	if len(t.Header) < 2 || t.Header[0] != "" || len(t.Rows) == 0 {
		return
	}
	for _, rec := range t.Rows {
		if rec[0] == "" {
			return
		}
	}
	t.Labels = make([]string, len(t.Rows))
	for i, rec := range t.Rows {
		t.Labels[i] = rec[0]
		t.Rows[i] = rec[1:]
	}
	t.Header = t.Header[1:]
}

// csvError says where a malformed file fails by line and character:
// encoding/csv's "column" is a byte position, which users would take for
// a data column.
func csvError(err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("line %d, character %d: %v", pe.Line, pe.Column, pe.Err)
}

// fields counts the fields of a header line split at sep (0 when it is
// not one CSV record).
func fields(line []byte, sep rune) int {
	if !bytes.ContainsRune(line, sep) {
		return 1
	}
	cr := csv.NewReader(bytes.NewReader(line))
	cr.Comma = sep
	cr.LazyQuotes = true
	rec, err := cr.Read()
	if err != nil {
		return 0
	}
	return len(rec)
}

// IsMissing reports whether a field of a data file is a missing value as
// R, pandas, Stata and spreadsheets write them: "NA", "", "NaN", "nan"
// or ".".
func IsMissing(s string) bool {
	switch strings.TrimSpace(s) {
	case "NA", "", "NaN", "nan", ".":
		return true
	}
	return false
}

// ParseDatum parses one number of a data file: finite and at most
// MaxDatum in magnitude. The error says why a field was refused; callers
// add where it is.
func ParseDatum(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%q is not a number (missing values are not supported; drop or impute them)", s)
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("%q is not a finite number", s)
	case math.Abs(v) > MaxDatum:
		return 0, fmt.Errorf("%q is too large: beyond %g in magnitude its square overflows and the likelihood is not finite; rescale the column", s, MaxDatum)
	}
	return v, nil
}

// ReadJSONObject reads a JSON data file holding exactly one object and
// returns its fields: a UTF-8 byte-order mark is accepted; UTF-16,
// anything after the object (trailing text, a second object) and a key
// given twice at any depth are errors naming it.
func ReadJSONObject(r io.Reader) (map[string]json.RawMessage, error) {
	b, err := readText(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrFormat, err)
	}
	if fields == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrFormat)
	}
	off := dec.InputOffset()
	if rest := bytes.TrimSpace(b[off:]); len(rest) > 0 {
		what := "text"
		if rest[0] == '{' {
			what = "a second JSON object"
		}
		return nil, fmt.Errorf("%w: %s after the data object at byte %d (%q): a data file holds one object", ErrFormat, what, off, excerpt(rest))
	}
	if err := noDuplicateKeys(b); err != nil {
		return nil, err
	}
	return fields, nil
}

func excerpt(b []byte) string {
	if len(b) > 20 {
		return string(b[:20]) + "…"
	}
	return string(b)
}

// noDuplicateKeys walks the tokens of the valid JSON document b and
// refuses an object that gives a key twice (encoding/json keeps the last
// silently).
func noDuplicateKeys(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrFormat, err)
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return fmt.Errorf("%w: %v", ErrFormat, err)
				}
				k, _ := kt.(string)
				name := k
				if path != "" {
					name = path + "." + k
				}
				if seen[k] {
					return fmt.Errorf("%w: key %q appears twice; each name must be given once", ErrFormat, name)
				}
				seen[k] = true
				if err := walk(name); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrFormat, err)
		}
		return nil
	}
	return walk("")
}
