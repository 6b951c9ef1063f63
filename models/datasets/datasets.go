package datasets

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
)

// The embedded files, read-only. README.md and the licence files are not
// data sets and stay out.
//
//go:embed *.csv posteriordb/*.json
var files embed.FS

// Names of the data sets of the paper's experiments.
const (
	// ExchangeRates is the factor-analysis example: 143 monthly
	// observations of six standardised exchange rates (columns x1..x6).
	ExchangeRates = "exchange_rates_standardized.csv"
	// RobustRegression is the block variable-selection example: 80 rows
	// with the response y, the intercept X.1 and covariates X.2..X.6.
	RobustRegression = "robust_regression_vs.csv"
)

// Open opens the embedded data set called name for reading.
func Open(name string) (io.ReadCloser, error) {
	f, err := files.Open(name)
	if err != nil {
		return nil, notFound(name, err)
	}
	if st, err := f.Stat(); err != nil || st.IsDir() {
		f.Close()
		return nil, notFound(name, fs.ErrNotExist)
	}
	return f, nil
}

// ReadFile returns the contents of the embedded data set called name.
func ReadFile(name string) ([]byte, error) {
	b, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, notFound(name, err)
	}
	return b, nil
}

// Size returns the size in bytes of the embedded data set called name.
func Size(name string) (int64, error) {
	st, err := fs.Stat(files, name)
	if err != nil || st.IsDir() {
		return 0, notFound(name, fs.ErrNotExist)
	}
	return st.Size(), nil
}

// Names returns the names of every embedded data set, sorted.
func Names() []string {
	var names []string
	// WalkDir over an embed.FS only fails on a malformed root, which
	// cannot happen for ".".
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	slices.Sort(names)
	return names
}

// FS returns the embedded data sets as a read-only file system, for code
// that takes an fs.FS.
func FS() fs.FS { return files }

// Label is how output names the embedded data set called name, to tell it
// from a file on disk: "embedded:" followed by the name.
func Label(name string) string { return "embedded:" + name }

// Load reads, with read, the file at path or, when path is "", the
// embedded data set called name, and returns the result with the name of
// what it read: path, or the data set's Label.
func Load[T any](path, name string, read func(io.Reader) (T, error)) (T, string, error) {
	var r io.ReadCloser
	var err error
	if path == "" {
		r, err = Open(name)
		path = Label(name)
	} else {
		r, err = os.Open(path)
	}
	if err != nil {
		var zero T
		return zero, path, err
	}
	defer r.Close()
	v, err := read(r)
	return v, path, err
}

func notFound(name string, err error) error {
	return fmt.Errorf("datasets: no embedded data set %q (have %v): %w", name, Names(), err)
}
