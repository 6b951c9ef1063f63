package draws

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Setting is one configuration entry written as a "# key = value" comment
// line, the form CmdStan uses for its arguments (num_samples, num_warmup,
// save_warmup, seed, …) and ArviZ parses.
type Setting struct {
	Key, Value string
}

// ErrFormat reports malformed CSV input.
var ErrFormat = errors.New("draws: malformed CSV")

// WriteCSV writes chain c of d to w in CmdStan's CSV layout: config as
// comment lines, the header, then one row per draw, as CSVWriter does.
func (d *Draws) WriteCSV(w io.Writer, c int, config []Setting) error {
	if c < 0 || c >= len(d.chains) {
		return fmt.Errorf("draws: chain %d out of range [0, %d)", c, len(d.chains))
	}
	cw, err := NewCSVWriter(w, d.layout, config)
	if err != nil {
		return err
	}
	nd := len(d.layout.Diagnostics)
	for i := range d.Len(c) {
		row := d.row(c, i)
		k := 0
		if d.layout.Transdimensional {
			k = d.chains[c].models[i]
		}
		if err := cw.writeRow(row[nd:nd+len(d.layout.Params)], row[:nd], k); err != nil {
			return err
		}
	}
	return cw.Flush()
}

// CSVWriter streams the draws of one chain to an io.Writer in CmdStan's CSV
// layout as they are produced, so long runs need not be held in memory.
// Values are written in the shortest form that parses back to the same
// float64; NaN and infinities as CmdStan writes them (nan, inf, -inf). A
// CSVWriter is for one goroutine.
type CSVWriter struct {
	checkedRows
	w   *bufio.Writer
	buf []byte
}

// NewCSVWriter writes config as "# key = value" comment lines and the
// header row of layout l to w, and returns a writer for the draws.
func NewCSVWriter(w io.Writer, l Layout, config []Setting) (*CSVWriter, error) {
	header, err := csvHeader(w, l, config)
	if err != nil {
		return nil, err
	}
	cw := &CSVWriter{w: bufio.NewWriter(w), checkedRows: checkedRows{layout: l.clone()}}
	cw.sink = cw
	if _, err := cw.w.WriteString(header); err != nil {
		return nil, err
	}
	return cw, nil
}

// csvHeader checks the arguments of NewCSVWriter and NewStream and returns
// the start of their files: config as comment lines, then the header row
// of layout l.
func csvHeader(w io.Writer, l Layout, config []Setting) (string, error) {
	if w == nil {
		return "", errors.New("draws: nil writer")
	}
	if err := l.validate(); err != nil {
		return "", err
	}
	if err := checkSettings(config); err != nil {
		return "", err
	}
	var b strings.Builder
	writeSettings(&b, config)
	b.WriteString(strings.Join(l.columnNames(), ","))
	b.WriteByte('\n')
	return b.String(), nil
}

// checkedRows gives CSVWriter and Stream their Write and WriteModel: each
// draw is checked against the layout before the sink takes it.
type checkedRows struct {
	layout Layout
	sink   interface {
		writeRow(params, diagnostics []float64, k int) error
	}
}

// Write writes one draw of a run that is not transdimensional.
func (r *checkedRows) Write(params, diagnostics []float64) error {
	return r.write(false, 0, params, diagnostics)
}

// WriteModel writes one draw of model k of a transdimensional run.
func (r *checkedRows) WriteModel(k int, params, diagnostics []float64) error {
	return r.write(true, k, params, diagnostics)
}

func (r *checkedRows) write(transdimensional bool, k int, params, diagnostics []float64) error {
	if err := r.layout.checkDraw(params, diagnostics, transdimensional, k); err != nil {
		return err
	}
	return r.sink.writeRow(params, diagnostics, k)
}

// Flush writes any buffered data to the underlying io.Writer.
func (cw *CSVWriter) Flush() error { return cw.w.Flush() }

// Comment writes text as a comment line after the rows written so far (its
// line breaks replaced by spaces), for what a row's columns refer to, such
// as the terms of a model first met at that row. Readers skip it; ReadCSV
// returns it as a Setting when it reads "key = value", so text should not.
func (cw *CSVWriter) Comment(text string) error {
	_, err := cw.w.WriteString("# " + strings.NewReplacer("\n", " ", "\r", " ").Replace(text) + "\n")
	return err
}

// MarkInterrupted writes the comment line "# interrupted = reason" (reason
// "true" if empty) after the rows written so far, as
// Stream.MarkInterrupted does: the rows are valid, but the chain stopped
// before its end. ReadCSV returns it as a Setting.
func (cw *CSVWriter) MarkInterrupted(reason string) error {
	_, err := cw.w.WriteString(interruptedLine(reason))
	return err
}

func (cw *CSVWriter) writeRow(params, diagnostics []float64, k int) error {
	cw.buf = appendRow(cw.buf[:0], cw.layout.Transdimensional, params, diagnostics, k)
	_, err := cw.w.Write(cw.buf)
	return err
}

func appendValue(buf []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(buf, "nan"...)
	case math.IsInf(v, 1):
		return append(buf, "inf"...)
	case math.IsInf(v, -1):
		return append(buf, "-inf"...)
	}
	return strconv.AppendFloat(buf, v, 'g', -1, 64)
}

// ChainFileNames returns the per-chain file names WriteFiles uses for base:
// base "out/fit.csv" (or "out/fit") and 2 chains give out/fit_1.csv and
// out/fit_2.csv, CmdStan's naming of multi-chain output. It returns no
// names for chains < 1.
func ChainFileNames(base string, chains int) []string {
	stem := strings.TrimSuffix(base, ".csv")
	names := make([]string, max(chains, 0))
	for c := range names {
		names[c] = fmt.Sprintf("%s_%d.csv", stem, c+1)
	}
	return names
}

// WriteFiles writes each chain of d to its own file named by
// ChainFileNames(base, d.Chains()), with config as comment lines, and
// returns the names. A "chain_id = k" setting (1-based) is added to each
// file, as CmdStan does.
func (d *Draws) WriteFiles(base string, config []Setting) ([]string, error) {
	names := ChainFileNames(base, len(d.chains))
	for c, name := range names {
		cfg := append(config[:len(config):len(config)], Setting{"chain_id", strconv.Itoa(c + 1)})
		f, err := os.Create(name)
		if err != nil {
			return nil, err
		}
		err = d.WriteCSV(f, c, cfg)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("draws: writing %s: %w", name, err)
		}
	}
	return names, nil
}

// maxLine bounds one CSV line; models with a few hundred thousand
// parameters fit.
const maxLine = 64 << 20

// ReadCSV reads one chain in CmdStan's CSV layout. Comment lines anywhere
// are skipped except that "key = value" comments are returned as settings
// (with CmdStan's " (Default)" marker removed); blank lines are skipped.
// Columns ending in "__" are diagnostics, model__ is the model index of a
// transdimensional run, and the rest are parameters. Every row must have one
// value per column; values may be NaN or infinite (nan, inf, -inf, as CmdStan
// writes them) except in the integer columns treedepth__, n_leapfrog__,
// divergent__ and model__.
func ReadCSV(r io.Reader) (*Draws, []Setting, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var (
		config  []Setting
		header  []string
		d       *Draws
		colKind []int // per CSV column: index into row (≥ 0), or model column (−1)
		ints    []bool
		line    int
		row     []float64
	)
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			// A byte-order mark, as some editors and Excel write, is not
			// part of the first column's name.
			text = strings.TrimPrefix(text, "\ufeff")
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "#") {
			if s, ok := parseSetting(text); ok {
				config = append(config, s)
			}
			continue
		}
		fields := strings.Split(text, ",")
		if header == nil {
			header = fields
			var err error
			d, colKind, ints, err = layoutFromHeader(header)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: line %d: %v", ErrFormat, line, err)
			}
			row = make([]float64, d.width())
			continue
		}
		if len(fields) != len(header) {
			return nil, nil, fmt.Errorf("%w: line %d has %d fields, header has %d", ErrFormat, line, len(fields), len(header))
		}
		model := 0
		for j, f := range fields {
			f = strings.TrimSpace(f)
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || f == "" {
				return nil, nil, fmt.Errorf("%w: line %d, column %s: %q is not a number", ErrFormat, line, header[j], f)
			}
			if ints[j] && !isInteger(v) {
				return nil, nil, fmt.Errorf("%w: line %d, column %s: %q is not an integer", ErrFormat, line, header[j], f)
			}
			if colKind[j] < 0 {
				if v < 0 || v > math.MaxInt32 {
					return nil, nil, fmt.Errorf("%w: line %d: model index %q out of range", ErrFormat, line, f)
				}
				model = int(v)
				continue
			}
			row[colKind[j]] = v
		}
		ch := &d.chains[0]
		ch.values = append(ch.values, row...)
		if d.layout.Transdimensional {
			ch.models = append(ch.models, model)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%w: after line %d: %v", ErrFormat, line, err)
	}
	if header == nil {
		return nil, nil, fmt.Errorf("%w: no header row", ErrFormat)
	}
	return d, config, nil
}

// layoutFromHeader classifies the header's columns and maps each to its
// place in a stored row (diagnostics first, then parameters, in file order).
func layoutFromHeader(header []string) (d *Draws, place []int, ints []bool, err error) {
	var l Layout
	modelCol := -1
	for j, name := range header {
		name = strings.TrimSpace(name)
		header[j] = name
		switch {
		case name == Model:
			if modelCol >= 0 {
				return nil, nil, nil, fmt.Errorf("duplicate column %s", Model)
			}
			modelCol = j
			l.Transdimensional = true
		case strings.HasSuffix(name, "__"):
			l.Diagnostics = append(l.Diagnostics, name)
		default:
			l.Params = append(l.Params, name)
		}
	}
	if d, err = New(l, 1); err != nil {
		return nil, nil, nil, err
	}
	place = make([]int, len(header))
	ints = make([]bool, len(header))
	nd, np := 0, 0
	for j, name := range header {
		ints[j] = integerColumn(name)
		switch {
		case j == modelCol:
			place[j] = -1
		case strings.HasSuffix(name, "__"):
			place[j] = nd
			nd++
		default:
			place[j] = len(l.Diagnostics) + np
			np++
		}
	}
	return d, place, ints, nil
}

// parseSetting reads a "# key = value" comment; CmdStan indents nested
// arguments and marks defaults with " (Default)".
func parseSetting(line string) (Setting, bool) {
	body := strings.TrimSpace(strings.TrimPrefix(line, "#"))
	k, v, ok := strings.Cut(body, "=")
	if !ok {
		return Setting{}, false
	}
	k = strings.TrimSpace(k)
	v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "(Default)"))
	if k == "" {
		return Setting{}, false
	}
	return Setting{Key: k, Value: v}, true
}

// ReadFiles reads one chain from each file (as ReadCSV) and combines them in
// order. The files must share their columns. The settings are those of the
// first file.
func ReadFiles(paths ...string) (*Draws, []Setting, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("draws: no files to read")
	}
	sets := make([]*Draws, len(paths))
	var config []Setting
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, nil, err
		}
		d, cfg, err := ReadCSV(f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		if i == 0 {
			config = cfg
		}
		sets[i] = d
	}
	d, err := Combine(sets...)
	if err != nil {
		return nil, nil, err
	}
	return d, config, nil
}
