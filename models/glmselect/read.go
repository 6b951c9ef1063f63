package glmselect

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/models/datasets"
)

// Family is the family a data file is read for: which values its response
// may hold. The zero value is GaussianFamily.
type Family int

// The families of ReadSettings.Family.
const (
	// GaussianFamily reads a response of numbers (for Gaussian).
	GaussianFamily Family = iota
	// LogisticFamily reads a binary response (for Logistic): 0 and 1, or
	// the texts Yes/No, TRUE/FALSE, Y/N in any case, yes being 1.
	LogisticFamily
	// PoissonFamily reads a response of non-negative integer counts (for
	// Poisson).
	PoissonFamily
)

// String names the family as the CLI's -family does.
func (f Family) String() string {
	switch f {
	case GaussianFamily:
		return "gaussian"
	case LogisticFamily:
		return "logistic"
	case PoissonFamily:
		return "poisson"
	}
	return "Family(" + strconv.Itoa(int(f)) + ")"
}

// MissingPolicy is what ReadData does with rows holding a missing value
// (NA, an empty field, NaN, nan or ., as R, pandas, Stata and
// spreadsheets write them). The zero value is RefuseMissing: silently
// dropping rows changes the data a conclusion is drawn from.
type MissingPolicy int

// The policies of ReadSettings.Missing.
const (
	// RefuseMissing refuses a file with missing values, naming up to five
	// of its rows and every column holding one.
	RefuseMissing MissingPolicy = iota
	// DropMissing drops the rows with a missing value and says so in
	// Data.Notes.
	DropMissing
)

// String names the policy as the CLI's -na does.
func (m MissingPolicy) String() string {
	switch m {
	case RefuseMissing:
		return "refuse"
	case DropMissing:
		return "drop"
	}
	return "MissingPolicy(" + strconv.Itoa(int(m)) + ")"
}

// ReadSettings configures ReadData; nil or the zero value reads a
// comma- or tab-separated file for the Gaussian family and refuses
// missing values.
type ReadSettings struct {
	// Family says what the response must hold (default GaussianFamily:
	// numbers).
	Family Family
	// Missing is the policy for rows with missing values (default
	// RefuseMissing).
	Missing MissingPolicy
	// Separator separates the fields: ',' or '\t'. The default 0 reads
	// it from the header line (tab-separated when it has more tab- than
	// comma-separated fields); set '\t' for a .tsv file whose header could
	// pass for either.
	Separator rune
}

// Data are a data file read for variable selection: the response, the
// candidate terms and how the file's columns became terms, so that new
// rows (Encode) are encoded the same way.
type Data struct {
	// X holds the n×p candidate terms in data units, for Gaussian,
	// Logistic or Poisson; Y the response (0/1 for a binary one).
	X *mat.Dense
	Y []float64
	// Names names X's columns: a column of numbers keeps its header; a
	// text column (a factor) is one 0/1 term per level but the reference,
	// named column[level]. Pass them as Settings.Names.
	Names []string
	// Response is the response column's header.
	Response string
	// RowNames are the rows' names when the file has a column of them
	// (an empty first header, as R's write.csv writes); nil otherwise.
	RowNames []string
	// Dropped counts the rows dropped for missing values (DropMissing).
	Dropped int
	// Notes say what a user should know before a run: the rows dropped
	// (first, when Dropped > 0), how each text column became terms, and
	// the sets of exactly collinear terms.
	Notes []string

	columns []column
}

// readNames names the reader's settings in its errors as Go fields; the
// CLI renames them by its flags (runs.SettingError.WithFlags).
var readNames = runs.Names{Pkg: "glmselect", Path: "ReadSettings."}

// ReadData reads a CSV or TSV data file with a header row: the column
// named response is the response, every other column a candidate
// predictor. A column of numbers is one term; a column of text (a factor)
// is one 0/1 indicator term per level but the reference (No or FALSE when
// a level, else the first in sorted order). Errors name columns by header
// and rows by line or row name: text in a column of numbers, an
// identifier column, a constant column, a response the family cannot
// use, missing values (unless DropMissing). Notes are not errors: the run
// can go on.
func ReadData(r io.Reader, response string, settings *ReadSettings) (*Data, error) {
	var s ReadSettings
	if settings != nil {
		s = *settings
	}
	t, err := readTable(r, s.Separator)
	if err != nil {
		return nil, err
	}
	yCol, err := checkHeader(t, response)
	if err != nil {
		return nil, err
	}
	d := &Data{Response: response}
	if t, err = missingRows(t, s.Missing, d); err != nil {
		return nil, err
	}
	if n := len(t.Rows); n < 2 {
		return nil, fmt.Errorf("glmselect: %d observation(s); need at least 2", n)
	}
	if d.Y, err = readResponse(t, yCol, s.Family); err != nil {
		return nil, err
	}
	d.RowNames = t.Labels
	idx := []int{}
	for j, h := range t.Header {
		if j == yCol {
			continue
		}
		c, err := classifyColumn(t, j)
		if err != nil {
			return nil, err
		}
		d.columns = append(d.columns, c)
		idx = append(idx, j)
		d.Names = append(d.Names, c.terms()...)
		if c.levels != nil {
			d.Notes = append(d.Notes, factorNote(h, c))
		}
	}
	for k, name := range d.Names {
		if name == response || slices.Contains(d.Names[:k], name) {
			return nil, fmt.Errorf("glmselect: two terms are named %q (a text column's indicator is named column[level]); rename a column", name)
		}
	}
	if d.X, err = encodeColumns(t, idx, d.columns, len(d.Names)); err != nil {
		return nil, fmt.Errorf("glmselect: %w", err)
	}
	k := 0
	for _, c := range d.columns {
		col := mat.Col(nil, k, d.X)
		k += len(c.terms())
		if c.levels == nil && slices.Min(col) == slices.Max(col) {
			return nil, fmt.Errorf("glmselect: column %q is constant (%v in every row%s): it duplicates the intercept, which is always in; drop the column", c.name, col[0], droppedNote(d))
		}
	}
	d.Notes = append(d.Notes, collinearNotes(d.X, d.Names)...)
	return d, nil
}

// Encode reads new rows (a CSV or TSV with a header, as ReadData reads)
// and encodes them as the data were, for Settings.Predict: the
// predictors' columns are found by header in any order (the response and
// other columns are ignored), and each text column's levels are the
// data's, an unknown level being an error naming the column, row and
// level. The result has a column per term of d.Names.
func (d *Data) Encode(r io.Reader) (*mat.Dense, error) {
	t, err := readTable(r, 0)
	if err != nil {
		return nil, err
	}
	if len(t.Rows) == 0 {
		return nil, errors.New("glmselect: no rows to encode (want a header row, then one row per new observation)")
	}
	idx := make([]int, len(d.columns))
	for c, col := range d.columns {
		idx[c] = slices.Index(t.Header, col.name)
		if idx[c] < 0 {
			return nil, fmt.Errorf("glmselect: no column %q, a predictor of the data (columns: %s)", col.name, listNames(t.Header, 12))
		}
	}
	x, err := encodeColumns(t, idx, d.columns, len(d.Names))
	if err != nil {
		return nil, fmt.Errorf("glmselect: %w", err)
	}
	return x, nil
}

// readTable reads a delimited file with the separator sep (0: from its
// header).
func readTable(r io.Reader, sep rune) (*datasets.Table, error) {
	var t *datasets.Table
	var err error
	switch sep {
	case 0, ',':
		// ReadCSV tells tabs from commas by the header.
		t, err = datasets.ReadCSV(r)
	case '\t':
		t, err = datasets.ReadTSV(r)
	default:
		return nil, fmt.Errorf("glmselect: ReadSettings.Separator = %q: want ',' or '\\t' (or 0 to read it from the header)", sep)
	}
	if err != nil {
		return nil, fmt.Errorf("glmselect: %w", err)
	}
	return t, nil
}

// column is how one predictor column of a data file becomes terms: a
// column of numbers is one term; a text column (a factor) is one 0/1
// indicator term per level but the reference. New rows must be encoded
// the same way, so the levels are kept in their order.
type column struct {
	name string
	// levels are a factor's levels, the reference first; nil for a
	// column of numbers.
	levels []string
}

// terms names the column's terms: the header of a column of numbers, or
// name[level] for each level of a factor but the reference.
func (c column) terms() []string {
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

// droppedNote says that a column was constant only once rows were dropped.
func droppedNote(d *Data) string {
	if d.Dropped == 0 {
		return ""
	}
	return fmt.Sprintf(" once the %d rows with missing values are dropped", d.Dropped)
}

// checkHeader checks that every column is named, once, and returns the
// response's column.
func checkHeader(t *datasets.Table, response string) (int, error) {
	header := t.Header
	yCol := -1
	for j, h := range header {
		switch {
		case h == "" && j == 0:
			return -1, errors.New("glmselect: the first column has no name in the header (a column of row names needs a value in every row)")
		case h == "":
			return -1, fmt.Errorf("glmselect: the column after %q has no name in the header", header[j-1])
		case slices.Contains(header[:j], h):
			return -1, fmt.Errorf("glmselect: two columns are named %q", h)
		case h == response:
			yCol = j
		}
	}
	if yCol < 0 {
		return -1, readNames.Error("Response", nil, func(n runs.Names) string {
			what := "the response " + strconv.Quote(response)
			if _, ok := n.Flags["Response"]; ok {
				what = n.Is("Response", strconv.Quote(response))
			}
			return fmt.Sprintf("%s: no such column (columns: %s)", what, listNames(header, 12))
		})
	}
	if len(header) == 1 {
		return -1, fmt.Errorf("glmselect: no predictor columns besides the response %q: nothing to select (p = 0)", response)
	}
	return yCol, nil
}

// missingRows applies the missing-value policy: it refuses rows holding a
// missing value (datasets.IsMissing), naming up to five and the columns,
// or drops them and notes how many. It returns the table of the kept rows.
func missingRows(t *datasets.Table, policy MissingPolicy, d *Data) (*datasets.Table, error) {
	var rows []int
	var cols, where []string
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
	switch policy {
	case RefuseMissing:
		more := ""
		if len(rows) > len(where) {
			more = fmt.Sprintf(", … (%d more)", len(rows)-len(where))
		}
		return nil, readNames.Error("Missing", nil, func(n runs.Names) string {
			return fmt.Sprintf("%d row(s) have missing values (NA, empty, NaN, nan or .): %s%s; columns with missing values: %s. Drop those rows with %s, or impute the values",
				len(rows), strings.Join(where, ", "), more, listNames(cols, 12), n.Is("Missing", DropMissing))
		})
	case DropMissing:
	default:
		return nil, readNames.Error("Missing", nil, func(n runs.Names) string {
			return fmt.Sprintf("%s: want %s or %s", n.Is("Missing", int(policy)), RefuseMissing, DropMissing)
		})
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
	d.Dropped = len(rows)
	d.Notes = append(d.Notes, fmt.Sprintf("dropped %d of %d rows for missing values in %s; n is now %d", len(rows), len(t.Rows), listNames(cols, 12), len(kept.Rows)))
	return kept, nil
}

// isNumber reports whether s is written as a number (finite or not):
// text that is not is a factor level.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// readResponse reads the response column: numbers valid for the family,
// or for LogisticFamily the texts Yes/No, TRUE/FALSE, Y/N (any case; yes
// is 1).
func readResponse(t *datasets.Table, yCol int, family Family) ([]float64, error) {
	name := t.Header[yCol]
	if family < GaussianFamily || family > PoissonFamily {
		return nil, readNames.Error("Family", nil, func(n runs.Names) string {
			return fmt.Sprintf("%s: want %s, %s or %s", n.Is("Family", int(family)), GaussianFamily, LogisticFamily, PoissonFamily)
		})
	}
	y := make([]float64, len(t.Rows))
	var text []string
	for _, rec := range t.Rows {
		if s := rec[yCol]; !isNumber(s) && !slices.Contains(text, s) {
			text = append(text, s)
		}
	}
	binaryText := !slices.ContainsFunc(t.Rows, func(rec []string) bool { return !isYes(rec[yCol]) && !isNo(rec[yCol]) })
	if text != nil && family == LogisticFamily && binaryText {
		for i, rec := range t.Rows {
			if isYes(rec[yCol]) {
				y[i] = 1
			}
		}
		return y, nil
	}
	if text != nil {
		want := "numbers"
		if family == LogisticFamily {
			want = "0 and 1, or Yes/No, TRUE/FALSE, Y/N"
		}
		return nil, readNames.Error("Family", nil, func(n runs.Names) string {
			return fmt.Sprintf("the response %q holds text (values seen: %s): %s needs %s", name, quoteList(text, 6), n.Is("Family", family), want)
		})
	}
	for i, rec := range t.Rows {
		v, err := datasets.ParseDatum(rec[yCol])
		if err != nil {
			return nil, fmt.Errorf("glmselect: %s, column %q: %v", t.Row(i), name, err)
		}
		var want string
		switch {
		case family == LogisticFamily && v != 0 && v != 1:
			want = "0 or 1"
		case family == PoissonFamily && (v < 0 || v != math.Trunc(v)):
			want = "a non-negative integer count"
		}
		if want != "" {
			row := t.Row(i)
			return nil, readNames.Error("Family", nil, func(n runs.Names) string {
				return fmt.Sprintf("%s: %s needs the response %q to be %s, but it is %v", row, n.Is("Family", family), name, want, v)
			})
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

// listNames lists up to max names, then how many more.
func listNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, … (%d more)", strings.Join(names[:max], ", "), len(names)-max)
}

// classifyColumn decides whether predictor column j holds numbers or
// text (a factor, whose levels it sorts: the reference first, No or
// FALSE when present, else the first in order). A column of numbers with
// a few texts is refused at the first text, which is likely a typo or a
// missing-value code, not a level; so is text that differs in every row
// (an identifier, not a predictor).
func classifyColumn(t *datasets.Table, j int) (column, error) {
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
		return column{name: name}, nil
	case numbers > n-numbers:
		return column{}, fmt.Errorf("glmselect: %s, column %q: %q is not a number, while %d of the column's %d values are (a missing value is written NA, an empty field, NaN, nan or .)",
			t.Row(firstText), name, t.Rows[firstText][j], numbers, n)
	case len(levels) == 1:
		return column{}, fmt.Errorf("glmselect: column %q is constant (%q in every row): it duplicates the intercept, which is always in; drop the column", name, levels[0])
	case len(levels) == n && n >= 10:
		return column{}, fmt.Errorf("glmselect: column %q holds a different text in every row (%s): an identifier, not a predictor; drop it, or make it the first column with an empty header to name the rows",
			name, quoteList(levels, 3))
	}
	slices.Sort(levels)
	if k := slices.IndexFunc(levels, isNo); k > 0 {
		ref := levels[k]
		levels = append([]string{ref}, slices.Delete(levels, k, k+1)...)
	}
	return column{name: name, levels: levels}, nil
}

// factorNote says how a text column became terms.
func factorNote(name string, c column) string {
	terms := c.terms()
	if len(terms) == 1 {
		return fmt.Sprintf("column %q is text: its term %s is 1 where it is %q, 0 where %q", name, terms[0], c.levels[1], c.levels[0])
	}
	return fmt.Sprintf("column %q is text with %d levels: its %d levels but the reference %q are %d separate terms (%s), each 0/1 and selected on its own: selecting a factor's levels together is not supported yet",
		name, len(c.levels), len(terms), c.levels[0], len(terms), listNames(terms, 6))
}

// encodeColumns encodes the columns idx of t as cols say, into a matrix
// of p terms.
func encodeColumns(t *datasets.Table, idx []int, cols []column, p int) (*mat.Dense, error) {
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

// collinearNotes names the sets of exactly collinear terms of x
// (CollinearSets) by their names: copies first, grouped, then
// combinations, at most ten lines and what that means for the run.
func collinearNotes(x *mat.Dense, names []string) []string {
	sets := CollinearSets(x)
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
	head := "exactly collinear terms: a model holding a whole set below has a singular design: its coefficients are not identified, and under the g-prior (the Gaussian family's default) it gets zero prior mass"
	return append(append(wide, head), lines...)
}
