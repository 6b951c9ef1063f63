package main

import (
	"bytes"
	"fmt"
	"math"

	"github.com/trjgo/trj/models/datasets"
)

// Real data sets of issue 32 in models/datasets/select and their references.
const (
	UScrimeFile = "uscrime.csv"
	FLSFile     = "fls.csv"
	PimaFile    = "pima.csv"
	UScrimeRef  = "uscrime_gprior_exact.json"
	FLSRef      = "fls_gprior_mc3.json"
	PimaRef     = "pima_is.json"
)

// realData reads one of the embedded real data sets: the response is the
// first column (a Yes/No response is read as 1/0), the predictors the
// others, with their names.
func realData(file string) (dataset, []string, error) {
	b, err := datasets.ReadFile("select/" + file)
	if err != nil {
		return dataset{}, nil, err
	}
	t, err := datasets.ReadCSV(bytes.NewReader(b))
	if err != nil {
		return dataset{}, nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(t.Header) < 2 || len(t.Rows) < 3 {
		return dataset{}, nil, fmt.Errorf("%s: %d columns and %d rows, want a response, predictors and at least 3 rows", file, len(t.Header), len(t.Rows))
	}
	d := dataset{y: make([]float64, len(t.Rows)), x: make([][]float64, len(t.Rows))}
	for i, row := range t.Rows {
		switch row[0] {
		case "Yes":
			d.y[i] = 1
		case "No":
			d.y[i] = 0
		default:
			if d.y[i], err = datasets.ParseDatum(row[0]); err != nil {
				return dataset{}, nil, fmt.Errorf("%s line %d: response: %w", file, t.Lines[i], err)
			}
		}
		d.x[i] = make([]float64, len(row)-1)
		for j, s := range row[1:] {
			if d.x[i][j], err = datasets.ParseDatum(s); err != nil {
				return dataset{}, nil, fmt.Errorf("%s line %d, column %s: %w", file, t.Lines[i], t.Header[j+1], err)
			}
		}
	}
	return d, append([]string(nil), t.Header[1:]...), nil
}

// columnSD returns the sample standard deviations (divisor n−1) of the
// predictors of d, the scale trj's standardisation divides by.
func columnSD(d dataset) []float64 {
	n, p := len(d.y), len(d.x[0])
	sd := make([]float64, p)
	for j := range p {
		var m, ss float64
		for i := range n {
			m += d.x[i][j]
		}
		m /= float64(n)
		for i := range n {
			ss += (d.x[i][j] - m) * (d.x[i][j] - m)
		}
		sd[j] = math.Sqrt(ss / float64(n-1))
	}
	return sd
}
