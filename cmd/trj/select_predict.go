package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/selection"
)

// readPredictRows reads the new rows of -predict: a CSV with a header
// naming (at least) the predictors, matched by name in any order; other
// columns, the response among them, are ignored. Errors name the file,
// the missing columns or the line and column of a bad value.
func readPredictRows(path string, train *selectData) (*mat.Dense, error) {
	b, err := readDataFile(path)
	if err != nil {
		return nil, fmt.Errorf("-predict: %w", err)
	}
	// The new rows are encoded as the training data were: the same
	// columns, factor levels and indicator terms.
	x, err := train.Encode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("-predict %s: %w", path, readError(err))
	}
	return x, nil
}

// writePredictions writes the model-averaged predictions of res to path:
// one row per new row, its mean, central 95% interval and the mean's
// MCSE.
func writePredictions(path string, res *selection.Result) error {
	if len(res.Quantities) == 0 {
		return errors.New("-predictions: the result holds no predictions")
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-predictions: %w", err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("row,mean,lower,upper,mean_mcse\n")
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for i, q := range res.Quantities {
		w.WriteString(strings.Join([]string{strconv.Itoa(i + 1), g(float64(q.Mean)), g(float64(q.Lower)), g(float64(q.Upper)), g(float64(q.MeanMCSE))}, ","))
		w.WriteByte('\n')
	}
	err = w.Flush()
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("-predictions: %w", err)
	}
	return nil
}
