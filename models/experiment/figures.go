package experiment

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// FigureWriter writes an experiment's figures into one directory, each as
// PNG and SVG, and collects the files written and the failures. A failed
// file does not stop the others, so one bad figure still leaves the rest.
type FigureWriter struct {
	dir   string
	files []string
	errs  []error
}

// NewFigureWriter returns a FigureWriter into dir, creating dir if needed.
func NewFigureWriter(dir string) (*FigureWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &FigureWriter{dir: dir}, nil
}

// Write calls draw with the paths dir/base.png and dir/base.svg in turn,
// recording each path draw succeeded on and each error, wrapped with its
// path.
func (w *FigureWriter) Write(base string, draw func(path string) error) {
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(w.dir, base+ext)
		if err := draw(path); err != nil {
			w.errs = append(w.errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		w.files = append(w.files, path)
	}
}

// Files returns the files written so far.
func (w *FigureWriter) Files() []string { return w.files }

// Err joins the errors of the writes so far; nil if there were none.
func (w *FigureWriter) Err() error { return errors.Join(w.errs...) }

// ProposalNames maps proposal types to their display names in figures.
type ProposalNames map[string]string

// Name returns the display name of kind, or kind itself if it has none.
func (n ProposalNames) Name(kind string) string {
	if s, ok := n[kind]; ok {
		return s
	}
	return kind
}

// AnyFinite reports whether v holds a finite value. Figures skip estimates
// that are all NaN or ±Inf, such as bridge estimates of a proposal type
// that never accepted a jump, since there is nothing to draw.
func AnyFinite(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return true
		}
	}
	return false
}
