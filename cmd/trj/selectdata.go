package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
)

// naPolicies are the -na values of "trj select": what to do with rows
// holding a missing value.
func naPolicies() []string { return []string{"refuse", "drop"} }

// selectColumn is how one predictor column of the data file becomes
// terms: a column of numbers is one term; a text column (a factor) is one
// 0/1 indicator term per level but the reference. The prediction input
// must be encoded the same way, so the levels are kept in their order.
type selectColumn struct {
	name string
	// levels are a factor's levels, the reference first; nil for a
	// column of numbers.
	levels []string
}

// terms names the column's terms: the header of a column of numbers, or
// name[level] for each level of a factor but the reference.
func (c selectColumn) terms() []string {
	if c.levels == nil {
		return []string{c.name}
	}
	t := make([]string, 0, len(c.levels)-1)
	for _, l := range c.levels[1:] {
		t = append(t, c.name+"["+l+"]")
	}
	return t
}

// isYes and isNo recognise the texts of a binary response or of a
// yes/no factor, in any case: yes is 1, and no is a factor's reference
// level.
func isYes(s string) bool {
	switch strings.ToLower(s) {
	case "yes", "true", "y":
		return true
	}
	return false
}

func isNo(s string) bool {
	switch strings.ToLower(s) {
	case "no", "false", "n":
		return true
	}
	return false
}

// parseSelectCSV parses b, the data file read from path (tab-separated
// when path ends in .tsv or its header is), as readSelectCSV does: the
// rows with a missing value are refused or dropped (na), text columns
// become indicators, and the notes to print before the run (dropped rows,
// factors, exact collinearity) are in the result.
func parseSelectCSV(path string, b []byte, yName, family, na string) (*selectData, error) {
	read := datasets.ReadCSV
	if strings.EqualFold(filepath.Ext(path), ".tsv") {
		read = datasets.ReadTSV
	}
	t, err := read(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	yCol, err := checkHeader(path, t, yName)
	if err != nil {
		return nil, err
	}
	d := &selectData{}
	if t, err = missingRows(path, t, na, d); err != nil {
		return nil, err
	}
	if n := len(t.Rows); n < 2 {
		return nil, fmt.Errorf("%s: %d observation(s); need at least 2", path, n)
	}
	if d.y, err = selectResponse(path, t, yCol, family); err != nil {
		return nil, err
	}
	d.labels = t.Labels
	idx := []int{}
	for j, h := range t.Header {
		if j == yCol {
			continue
		}
		c, err := classifyColumn(path, t, j)
		if err != nil {
			return nil, err
		}
		d.columns = append(d.columns, c)
		idx = append(idx, j)
		d.names = append(d.names, c.terms()...)
		if c.levels != nil {
			d.notes = append(d.notes, factorNote(h, c))
		}
	}
	for k, name := range d.names {
		if name == yName || slices.Contains(d.names[:k], name) {
			return nil, fmt.Errorf("%s: two terms are named %q (a text column's indicator is named column[level]); rename a column", path, name)
		}
	}
	if d.x, err = encodeColumns(t, idx, d.columns, len(d.names)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	k := 0
	for _, c := range d.columns {
		col := mat.Col(nil, k, d.x)
		k += len(c.terms())
		if c.levels == nil && slices.Min(col) == slices.Max(col) {
			return nil, fmt.Errorf("%s: column %q is constant (%v in every row%s): it duplicates the intercept, which is always in; drop the column", path, c.name, col[0], droppedNote(d))
		}
	}
	d.notes = append(d.notes, collinearNotes(d.x, d.names)...)
	return d, nil
}

// droppedNote says that a column was constant only once rows were dropped.
func droppedNote(d *selectData) string {
	if d.dropped == 0 {
		return ""
	}
	return fmt.Sprintf(" once the %d rows with missing values are dropped", d.dropped)
}

// checkHeader checks that every column is named, once, and returns the
// response's column.
func checkHeader(path string, t *datasets.Table, yName string) (int, error) {
	header := t.Header
	yCol := -1
	for j, h := range header {
		switch {
		case h == "" && j == 0:
			return -1, fmt.Errorf("%s: the first column has no name in the header (a column of row names needs a value in every row)", path)
		case h == "":
			return -1, fmt.Errorf("%s: the column after %q has no name in the header", path, header[j-1])
		case slices.Contains(header[:j], h):
			return -1, fmt.Errorf("%s: two columns are named %q", path, h)
		case h == yName:
			yCol = j
		}
	}
	if yCol < 0 {
		return -1, fmt.Errorf("-y %q: no such column in %s (columns: %s)", yName, path, listNames(header, 12))
	}
	if len(header) == 1 {
		return -1, fmt.Errorf("%s has no predictor columns besides the response %q: nothing to select (p = 0)", path, yName)
	}
	return yCol, nil
}

// missingRows applies the -na policy: it refuses rows holding a missing
// value (datasets.IsMissing), naming up to five and the columns, or
// drops them and notes how many. It returns the table of the kept rows.
func missingRows(path string, t *datasets.Table, na string, d *selectData) (*datasets.Table, error) {
	var rows []int
	var cols []string
	var where []string
	for i, rec := range t.Rows {
		var in []string
		for j, s := range rec {
			if datasets.IsMissing(s) {
				in = append(in, t.Header[j])
				if !slices.Contains(cols, t.Header[j]) {
					cols = append(cols, t.Header[j])
				}
			}
		}
		if in != nil {
			rows = append(rows, i)
			if len(where) < 5 {
				where = append(where, fmt.Sprintf("%s (%s)", t.Row(i), strings.Join(in, ", ")))
			}
		}
	}
	if rows == nil {
		return t, nil
	}
	if na != "drop" {
		more := ""
		if len(rows) > len(where) {
			more = fmt.Sprintf(", … (%d more)", len(rows)-len(where))
		}
		return nil, fmt.Errorf("%s: %d row(s) have missing values (NA, empty, NaN, nan or .): %s%s; columns with missing values: %s. Drop those rows with -na drop, or impute the values",
			path, len(rows), strings.Join(where, ", "), more, listNames(cols, 12))
	}
	kept := &datasets.Table{Header: t.Header}
	for i := range t.Rows {
		if _, drop := slices.BinarySearch(rows, i); drop {
			continue
		}
		kept.Rows = append(kept.Rows, t.Rows[i])
		kept.Lines = append(kept.Lines, t.Lines[i])
		if t.Labels != nil {
			kept.Labels = append(kept.Labels, t.Labels[i])
		}
	}
	d.dropped = len(rows)
	d.notes = append(d.notes, fmt.Sprintf("-na drop: dropped %d of %d rows for missing values in %s; n is now %d", len(rows), len(t.Rows), listNames(cols, 12), len(kept.Rows)))
	return kept, nil
}

// isNumber reports whether s is written as a number (finite or not):
// text that is not is a factor level.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// selectResponse reads the response column: numbers valid for the family,
// or for -family logistic the texts Yes/No, TRUE/FALSE, Y/N (any case;
// yes is 1).
func selectResponse(path string, t *datasets.Table, yCol int, family string) ([]float64, error) {
	name := t.Header[yCol]
	y := make([]float64, len(t.Rows))
	var text []string
	for _, rec := range t.Rows {
		if s := rec[yCol]; !isNumber(s) && !slices.Contains(text, s) {
			text = append(text, s)
		}
	}
	if text != nil && family == "logistic" && !slices.ContainsFunc(t.Rows, func(rec []string) bool {
		return !isYes(rec[yCol]) && !isNo(rec[yCol])
	}) {
		for i, rec := range t.Rows {
			if isYes(rec[yCol]) {
				y[i] = 1
			}
		}
		return y, nil
	}
	if text != nil {
		want := "numbers"
		if family == "logistic" {
			want = "0 and 1, or Yes/No, TRUE/FALSE, Y/N"
		}
		return nil, fmt.Errorf("%s: the response %q holds text (values seen: %s): -family %s needs %s", path, name, quoteList(text, 6), family, want)
	}
	for i, rec := range t.Rows {
		v, err := datasets.ParseDatum(rec[yCol])
		if err != nil {
			return nil, fmt.Errorf("%s: %s, column %q: %v", path, t.Row(i), name, err)
		}
		switch family {
		case "logistic":
			if v != 0 && v != 1 {
				return nil, fmt.Errorf("%s: %s: -family logistic needs the response %q to be 0 or 1, but it is %v", path, t.Row(i), name, v)
			}
		case "poisson":
			if v < 0 || v != math.Trunc(v) {
				return nil, fmt.Errorf("%s: %s: -family poisson needs the response %q to be a non-negative integer count, but it is %v", path, t.Row(i), name, v)
			}
		}
		y[i] = v
	}
	return y, nil
}

// quoteList quotes up to max texts, then says how many more.
func quoteList(s []string, max int) string {
	q := make([]string, 0, max)
	for _, v := range s[:min(len(s), max)] {
		q = append(q, strconv.Quote(v))
	}
	if len(s) > max {
		q = append(q, fmt.Sprintf("… (%d more)", len(s)-max))
	}
	return strings.Join(q, ", ")
}

// classifyColumn decides whether predictor column j holds numbers or
// text (a factor, whose levels it sorts: the reference first, No or
// FALSE when present, else the first in order). A column of numbers with
// a few texts is refused at the first text, which is likely a typo or a
// missing-value code, not a level; so is text that differs in every row
// (an identifier, not a predictor).
func classifyColumn(path string, t *datasets.Table, j int) (selectColumn, error) {
	name := t.Header[j]
	numbers, firstText := 0, -1
	var levels []string
	for i, rec := range t.Rows {
		s := rec[j]
		if isNumber(s) {
			numbers++
		} else if firstText < 0 {
			firstText = i
		}
		if !slices.Contains(levels, s) {
			levels = append(levels, s)
		}
	}
	n := len(t.Rows)
	switch {
	case firstText < 0:
		return selectColumn{name: name}, nil
	case numbers > n-numbers:
		return selectColumn{}, fmt.Errorf("%s: %s, column %q: %q is not a number, while %d of the column's %d values are (a missing value is written NA, an empty field, NaN, nan or .)",
			path, t.Row(firstText), name, t.Rows[firstText][j], numbers, n)
	case len(levels) == 1:
		return selectColumn{}, fmt.Errorf("%s: column %q is constant (%q in every row): it duplicates the intercept, which is always in; drop the column", path, name, levels[0])
	case len(levels) == n && n >= 10:
		return selectColumn{}, fmt.Errorf("%s: column %q holds a different text in every row (%s): an identifier, not a predictor; drop it, or make it the first column with an empty header to name the rows",
			path, name, quoteList(levels, 3))
	}
	slices.Sort(levels)
	if k := slices.IndexFunc(levels, isNo); k > 0 {
		ref := levels[k]
		levels = append([]string{ref}, slices.Delete(levels, k, k+1)...)
	}
	return selectColumn{name: name, levels: levels}, nil
}

// factorNote says how a text column became terms.
func factorNote(name string, c selectColumn) string {
	terms := c.terms()
	if len(terms) == 1 {
		return fmt.Sprintf("column %q is text: its term %s is 1 where it is %q, 0 where %q", name, terms[0], c.levels[1], c.levels[0])
	}
	return fmt.Sprintf("column %q is text with %d levels: its %d levels but the reference %q are %d separate terms (%s), each 0/1 and selected on its own: selecting a factor's levels together is not supported yet",
		name, len(c.levels), len(terms), c.levels[0], len(terms), listNames(terms, 6))
}

// encodeColumns encodes the columns idx of t as cols say, into a matrix
// of p terms.
func encodeColumns(t *datasets.Table, idx []int, cols []selectColumn, p int) (*mat.Dense, error) {
	x := mat.NewDense(len(t.Rows), p, nil)
	for i, rec := range t.Rows {
		k := 0
		for c, j := range idx {
			s := rec[j]
			col := cols[c]
			switch {
			case datasets.IsMissing(s):
				return nil, fmt.Errorf("%s, column %q: missing value %q", t.Row(i), col.name, s)
			case col.levels == nil:
				v, err := datasets.ParseDatum(s)
				if err != nil {
					return nil, fmt.Errorf("%s, column %q: %v", t.Row(i), col.name, err)
				}
				x.Set(i, k, v)
			default:
				l := slices.Index(col.levels, s)
				if l < 0 {
					return nil, fmt.Errorf("%s, column %q: level %q is not one of the training data's (%s)", t.Row(i), col.name, s, quoteList(col.levels, 8))
				}
				if l > 0 {
					x.Set(i, k+l-1, 1)
				}
			}
			k += len(col.terms())
		}
	}
	return x, nil
}

// encodeLike encodes the table t (new data to predict) as the training
// data were encoded: the columns are found by their headers (the response
// and any other column are ignored), numbers are read as numbers, and
// each text column's levels are the training data's, an unknown level
// being an error naming the column, row and level. The result has a
// column per term of train.names.
func encodeLike(train *selectData, t *datasets.Table) (*mat.Dense, error) {
	idx := make([]int, len(train.columns))
	for c, col := range train.columns {
		idx[c] = slices.Index(t.Header, col.name)
		if idx[c] < 0 {
			return nil, fmt.Errorf("no column %q, a predictor of the training data (columns: %s)", col.name, listNames(t.Header, 12))
		}
	}
	return encodeColumns(t, idx, train.columns, len(train.names))
}

// collinearNotes names the sets of exactly collinear terms of x
// (glmselect.CollinearSets) by their names: copies first, grouped, then
// combinations, at most ten lines and what that means for the run.
func collinearNotes(x *mat.Dense, names []string) []string {
	sets := glmselect.CollinearSets(x)
	var wide []string
	if n, p := x.Dims(); p > n-1 {
		wide = []string{fmt.Sprintf("%d terms and %d observations: any model of more than %d terms has a singular design; among the terms beyond the rank, only exact copies are named", p, n, n-1)}
	}
	if len(sets) == 0 {
		return wide
	}
	var lines []string
	group := map[int][]int{} // first column of a copy group → the copies
	var firsts []int
	for _, s := range sets {
		if len(s) == 2 {
			if group[s[0]] == nil {
				firsts = append(firsts, s[0])
			}
			group[s[0]] = append(group[s[0]], s[1])
		}
	}
	slices.Sort(firsts)
	for _, f := range firsts {
		var ns []string
		for _, k := range append([]int{f}, group[f]...) {
			ns = append(ns, names[k])
		}
		lines = append(lines, fmt.Sprintf("%s and %s are exact copies (up to scale and shift)", strings.Join(ns[:len(ns)-1], ", "), ns[len(ns)-1]))
	}
	for _, s := range sets {
		if len(s) > 2 {
			var ns []string
			for _, k := range s[:len(s)-1] {
				ns = append(ns, names[k])
			}
			lines = append(lines, fmt.Sprintf("%s = an exact linear combination of %s (and the intercept)", names[s[len(s)-1]], listNames(ns, 8)))
		}
	}
	const most = 10
	if len(lines) > most {
		lines = append(lines[:most], fmt.Sprintf("… (%d more)", len(lines)-most))
	}
	head := "exactly collinear terms: a model holding a whole set below has a singular design: its coefficients are not identified, and under the g-prior (-family gaussian) it gets zero prior mass"
	return append(append(wide, head), lines...)
}
