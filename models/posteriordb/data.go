package posteriordb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/datasets"
)

// ErrData reports a missing, malformed or inconsistent data file.
var ErrData = errors.New("posteriordb: bad data")

// dataSet is a parsed posteriordb data file: Stan's JSON data format, an
// object of named numbers, vectors and matrices (arrays of rows).
type dataSet struct {
	path   string
	fields map[string]json.RawMessage
}

// readData parses the JSON object in the file at path, or, when path is
// "", in the embedded data set posteriordb/file of package datasets.
func readData(path, file string) (*dataSet, error) {
	var raw []byte
	var err error
	if path == "" {
		path = datasets.Label(embeddedDir + file)
		raw, err = datasets.ReadFile(embeddedDir + file)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("posteriordb: reading data: %w", err)
	}
	fields, err := datasets.ReadJSONObject(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrData, path, err)
	}
	return &dataSet{path: path, fields: fields}, nil
}

// tooLarge says why a finite datum beyond datasets.MaxDatum is refused.
func tooLarge(x float64) string {
	if math.Abs(x) > datasets.MaxDatum && !math.IsInf(x, 0) {
		return fmt.Sprintf(": beyond %g in magnitude its square overflows and the likelihood is not finite; rescale it", datasets.MaxDatum)
	}
	return ""
}

func (d *dataSet) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrData, d.path, fmt.Sprintf(format, args...))
}

func (d *dataSet) field(name string) (json.RawMessage, error) {
	v, ok := d.fields[name]
	if !ok {
		return nil, d.errorf("missing field %q", name)
	}
	return v, nil
}

// number returns the finite number called name.
func (d *dataSet) number(name string) (float64, error) {
	raw, err := d.field(name)
	if err != nil {
		return 0, err
	}
	var x float64
	if err := json.Unmarshal(raw, &x); err != nil {
		return 0, d.errorf("field %q: want a number: %v", name, err)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > datasets.MaxDatum {
		return 0, d.errorf("field %q is %v%s", name, x, tooLarge(x))
	}
	return x, nil
}

// integer returns the integer called name, which must be at least lo.
func (d *dataSet) integer(name string, lo int) (int, error) {
	x, err := d.number(name)
	if err != nil {
		return 0, err
	}
	if x != math.Trunc(x) || math.Abs(x) > 1<<40 {
		return 0, d.errorf("field %q is %v, want an integer", name, x)
	}
	if int(x) < lo {
		return 0, d.errorf("field %q is %v, want at least %d", name, x, lo)
	}
	return int(x), nil
}

// vector returns the vector called name, of length n (any length if n < 0).
func (d *dataSet) vector(name string, n int) ([]float64, error) {
	raw, err := d.field(name)
	if err != nil {
		return nil, err
	}
	var v []float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, d.errorf("field %q: want an array of numbers: %v", name, err)
	}
	if n >= 0 && len(v) != n {
		return nil, d.errorf("field %q has %d elements, want %d", name, len(v), n)
	}
	if len(v) == 0 {
		return nil, d.errorf("field %q is empty", name)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > datasets.MaxDatum {
			return nil, d.errorf("field %q: element %d is %v%s", name, i+1, x, tooLarge(x))
		}
	}
	return v, nil
}

// boundedVector is vector with every element checked to lie in [lo, hi]
// (Stan's data-level bounds).
func (d *dataSet) boundedVector(name string, n int, lo, hi float64) ([]float64, error) {
	v, err := d.vector(name, n)
	if err != nil {
		return nil, err
	}
	for i, x := range v {
		if x < lo || x > hi {
			return nil, d.errorf("field %q: element %d is %v, outside [%v, %v]", name, i+1, x, lo, hi)
		}
	}
	return v, nil
}

// counts is vector with every element a non-negative integer.
func (d *dataSet) counts(name string, n int) ([]float64, error) {
	v, err := d.vector(name, n)
	if err != nil {
		return nil, err
	}
	for i, x := range v {
		if x < 0 || x != math.Trunc(x) {
			return nil, d.errorf("field %q: element %d is %v, want a non-negative integer", name, i+1, x)
		}
	}
	return v, nil
}

// matrix returns the rows×cols matrix called name, stored as an array of
// rows.
func (d *dataSet) matrix(name string, rows, cols int) (*mat.Dense, error) {
	raw, err := d.field(name)
	if err != nil {
		return nil, err
	}
	var v [][]float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, d.errorf("field %q: want an array of rows of numbers: %v", name, err)
	}
	if len(v) != rows || rows < 1 {
		return nil, d.errorf("field %q has %d rows, want %d", name, len(v), rows)
	}
	// Check the shape against the data before allocating: rows and cols
	// come from the file too, and a wrong size must be an error, not a
	// huge allocation or a mat.NewDense panic.
	for i, row := range v {
		if len(row) != cols || cols < 1 {
			return nil, d.errorf("field %q: row %d has %d columns, want %d", name, i+1, len(row), cols)
		}
	}
	m := mat.NewDense(rows, cols, nil)
	for i, row := range v {
		for j, x := range row {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > datasets.MaxDatum {
				return nil, d.errorf("field %q: element [%d, %d] is %v%s", name, i+1, j+1, x, tooLarge(x))
			}
			m.Set(i, j, x)
		}
	}
	return m, nil
}

// loader reads fields with a sticky error, so that a model's data section
// reads like Stan's.
type loader struct {
	d   *dataSet
	err error
}

func (l *loader) keep(err error) bool {
	if l.err == nil && err != nil {
		l.err = err
	}
	return l.err == nil
}

// read returns what f reads from the data set, or the zero value without
// calling f once a read has failed; it keeps f's error.
func read[T any](l *loader, f func() (T, error)) T {
	if l.err != nil {
		var zero T
		return zero
	}
	v, err := f()
	l.keep(err)
	return v
}

func (l *loader) integer(name string, lo int) int {
	return read(l, func() (int, error) { return l.d.integer(name, lo) })
}

func (l *loader) number(name string) float64 {
	return read(l, func() (float64, error) { return l.d.number(name) })
}

func (l *loader) vector(name string, n int) []float64 {
	return read(l, func() ([]float64, error) { return l.d.vector(name, n) })
}

func (l *loader) boundedVector(name string, n int, lo, hi float64) []float64 {
	return read(l, func() ([]float64, error) { return l.d.boundedVector(name, n, lo, hi) })
}

func (l *loader) counts(name string, n int) []float64 {
	return read(l, func() ([]float64, error) { return l.d.counts(name, n) })
}

func (l *loader) matrix(name string, rows, cols int) *mat.Dense {
	return read(l, func() (*mat.Dense, error) { return l.d.matrix(name, rows, cols) })
}

// embeddedDir is the folder of the posteriordb data sets in package
// datasets.
const embeddedDir = "posteriordb/"

// load opens the data file at path for a model's data section; an empty
// path means the model's own data set, file, embedded in package datasets.
// A file that cannot be read is the loader's first error.
func load(path, file string) *loader {
	d, err := readData(path, file)
	return &loader{d: d, err: err}
}
