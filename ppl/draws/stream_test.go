package draws

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// stanCSVComments is what rstan's read_stan_csv and cmdstanpy take from
// the comment lines of a CmdStan CSV file: the step size and inverse
// metric after "Adaptation terminated", and the three elapsed times.
type stanCSVComments struct {
	adapted     bool
	stepSize    float64
	invMetric   [][]float64
	elapsed     []float64 // warm-up, sampling, total
	interrupted string
}

var secondsRE = regexp.MustCompile(`([0-9.eE+-]+)\s+seconds\s+\((Warm-up|Sampling|Total)\)`)

// parseStanCSVComments follows rstan's parse_stancsv_comments: it finds
// the lines by their text, not by their position.
func parseStanCSVComments(t *testing.T, text string) stanCSVComments {
	t.Helper()
	var out stanCSVComments
	lines := strings.Split(text, "\n")
	inMetric := false
	for _, l := range lines {
		if !strings.HasPrefix(l, "#") {
			inMetric = false
			continue
		}
		body := strings.TrimSpace(strings.TrimPrefix(l, "#"))
		switch {
		case body == "Adaptation terminated":
			out.adapted = true
		case strings.HasPrefix(body, "Step size = "):
			v, err := strconv.ParseFloat(strings.TrimPrefix(body, "Step size = "), 64)
			if err != nil {
				t.Fatalf("step size line %q: %v", l, err)
			}
			out.stepSize = v
		case strings.Contains(body, "inverse mass matrix:"):
			inMetric = true
		case inMetric && body != "":
			var row []float64
			for _, f := range strings.Split(body, ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil {
					inMetric = false
					break
				}
				row = append(row, v)
			}
			if inMetric {
				out.invMetric = append(out.invMetric, row)
			}
		case strings.HasPrefix(body, Interrupted+" = "):
			out.interrupted = strings.TrimPrefix(body, Interrupted+" = ")
		}
		if m := secondsRE.FindStringSubmatch(l); m != nil {
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				t.Fatalf("elapsed line %q: %v", l, err)
			}
			out.elapsed = append(out.elapsed, v)
		}
		if strings.Contains(body, "Elapsed Time:") && !secondsRE.MatchString(l) {
			t.Errorf("Elapsed Time line without seconds: %q", l)
		}
	}
	return out
}

func TestStreamCmdStanBlocks(t *testing.T) {
	l := Layout{Diagnostics: []string{LP, AcceptStat}, Params: []string{"mu", "sigma"}}
	var buf bytes.Buffer
	s, err := NewStream(&buf, l, []Setting{{"num_samples", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]float64{0.5, 1.25}, []float64{-3, 0.9}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteAdaptation(Adaptation{StepSize: 0.75, InvMetricDiag: []float64{1.5, 0.25}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]float64{math.NaN(), math.Inf(1)}, []float64{-2.5, 1}); err != nil {
		t.Fatal(err)
	}
	s.SetElapsed(1500*time.Millisecond, 2250*time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]float64{1, 2}, []float64{0, 0}); err == nil {
		t.Error("Write after Close: no error")
	}
	text := buf.String()
	c := parseStanCSVComments(t, text)
	if !c.adapted || c.stepSize != 0.75 || !slices.Equal(c.invMetric[0], []float64{1.5, 0.25}) || len(c.invMetric) != 1 {
		t.Errorf("adaptation block read back as %+v:\n%s", c, text)
	}
	if !slices.Equal(c.elapsed, []float64{1.5, 2.25, 3.75}) {
		t.Errorf("elapsed times %v, want [1.5 2.25 3.75]:\n%s", c.elapsed, text)
	}
	if c.interrupted != "" {
		t.Errorf("uninterrupted file marked %q", c.interrupted)
	}
	// The blocks are comments: ReadCSV sees the two draws, in order.
	d, cfg, err := ReadCSV(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if d.Len(0) != 2 || d.Params(0, 0)[1] != 1.25 || !math.IsInf(d.Params(0, 1)[1], 1) {
		t.Errorf("read back %d draws: %v, %v", d.Len(0), d.Params(0, 0), d.Params(0, 1))
	}
	if !slices.Contains(cfg, Setting{"Step size", "0.75"}) {
		t.Errorf("settings %v lack the step size", cfg)
	}
}

func TestStreamDenseAndInterrupted(t *testing.T) {
	l := Layout{Diagnostics: []string{LP}, Params: []string{"a", "b"}, Transdimensional: true}
	path := filepath.Join(t.TempDir(), "fit.csv")
	s, err := CreateStream(path, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]float64{1, 2}, []float64{0}); err == nil {
		t.Error("transdimensional stream took a draw without a model index")
	}
	if err := s.WriteAdaptation(Adaptation{StepSize: 0.5, InvMetricDense: [][]float64{{2, 0.5}, {0.5, 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteModel(1, []float64{1, math.NaN()}, []float64{-1}); err != nil {
		t.Fatal(err)
	}
	// Flushed rows are in the file before Close: a reader sees a valid
	// CSV with the draw.
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	mid, _, err := ReadFiles(path)
	if err != nil || mid.Len(0) != 1 || mid.ModelIndex(0, 0) != 1 {
		t.Fatalf("file before Close: %v", err)
	}
	if err := s.MarkInterrupted("interrupted by signal\nterminated"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := parseStanCSVComments(t, string(raw))
	if len(c.invMetric) != 2 || !slices.Equal(c.invMetric[1], []float64{0.5, 1}) {
		t.Errorf("dense metric read back as %v:\n%s", c.invMetric, raw)
	}
	if c.interrupted != "interrupted by signal terminated" || len(c.elapsed) != 3 {
		t.Errorf("interrupted %q, elapsed %v:\n%s", c.interrupted, c.elapsed, raw)
	}
	_, cfg, err := ReadFiles(path)
	if err != nil || !slices.Contains(cfg, Setting{Interrupted, "interrupted by signal terminated"}) {
		t.Errorf("ReadFiles: %v, settings %v", err, cfg)
	}
}

func TestCreateStreamsNamesAndFailure(t *testing.T) {
	dir := t.TempDir()
	l := Layout{Params: []string{"x"}}
	streams, names, err := CreateStreams(filepath.Join(dir, "out.csv"), 2, l, []Setting{{"seed", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "out_1.csv"), filepath.Join(dir, "out_2.csv")}
	if !slices.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	for c, s := range streams {
		if err := s.Write([]float64{float64(c)}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	d, cfg, err := ReadFiles(names...)
	if err != nil || d.Chains() != 2 || d.Params(1, 0)[0] != 1 || !slices.Contains(cfg, Setting{"chain_id", "1"}) {
		t.Errorf("read back: %v %v", err, cfg)
	}
	one, names, err := CreateStreams(filepath.Join(dir, "single.csv"), 1, l, nil)
	if err != nil || !slices.Equal(names, []string{filepath.Join(dir, "single.csv")}) {
		t.Fatalf("one chain: %v %v", names, err)
	}
	one[0].Close()
	if _, _, err := CreateStreams(filepath.Join(dir, "missing", "out.csv"), 2, l, nil); err == nil {
		t.Error("stream in a missing folder: no error")
	}
	if _, _, err := CreateStreams(filepath.Join(dir, "x.csv"), 1, Layout{Params: []string{"bad,name"}}, nil); err == nil {
		t.Error("bad layout: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.csv")); err == nil {
		t.Error("bad layout left a file behind")
	}
}

func TestReadCSVByteOrderMark(t *testing.T) {
	d, _, err := ReadCSV(strings.NewReader("\ufefflp__,x\n-1,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := d.Layout(); !slices.Equal(l.Diagnostics, []string{LP}) || !slices.Equal(l.Params, []string{"x"}) {
		t.Errorf("layout with a byte-order mark: %+v", l)
	}
}

// TestCSVWriterMarkInterrupted: a CSVWriter marks its file interrupted as
// a Stream does, after the rows written, which stay valid.
func TestCSVWriterMarkInterrupted(t *testing.T) {
	var b strings.Builder
	w, err := NewCSVWriter(&b, Layout{Diagnostics: []string{"lp__"}, Params: []string{"a"}}, []Setting{{"method", "select"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.Write([]float64{float64(i)}, []float64{-1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.MarkInterrupted("context canceled\n"); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "2,-1\n# interrupted = context canceled\n") && !strings.HasSuffix(b.String(), "-1,2\n# interrupted = context canceled\n") {
		t.Errorf("file:\n%s", b.String())
	}
	d, cfg, err := ReadCSV(strings.NewReader(b.String()))
	if err != nil || d.Len(0) != 3 || !slices.Contains(cfg, Setting{Interrupted, "context canceled"}) {
		t.Errorf("read back: %v, %d rows, settings %v", err, d.Len(0), cfg)
	}
}
