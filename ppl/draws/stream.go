package draws

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FlushInterval is the longest a Stream keeps a finished draw in memory
// before writing it to its file.
const FlushInterval = time.Second

// streamBuffer is how many bytes of finished rows a Stream gathers before
// writing them without waiting for the next flush.
const streamBuffer = 64 << 10

// Interrupted is the key of the "# interrupted = reason" comment that
// Stream.MarkInterrupted adds to a file; ReadCSV returns it as a Setting.
const Interrupted = "interrupted"

// Adaptation is what a sampler tuned during warm-up, written by
// Stream.WriteAdaptation as CmdStan's adaptation block:
//
//	# Adaptation terminated
//	# Step size = 0.8
//	# Diagonal elements of inverse mass matrix:
//	# 1.2, 0.7
//
// (or "# Elements of inverse mass matrix:" and one comment line per row for
// a dense metric), the form rstan's read_stan_csv, cmdstanpy and ArviZ read.
type Adaptation struct {
	// StepSize is the adapted integrator step size (for random-walk
	// Metropolis, its proposal scale).
	StepSize float64
	// InvMetricDiag is the diagonal of the inverse metric, or nil.
	InvMetricDiag []float64
	// InvMetricDense is the dense inverse metric as rows, or nil; at
	// most one of InvMetricDiag and InvMetricDense may be set.
	InvMetricDense [][]float64
	// Notes are further comment lines written after the metric, without
	// the leading "# ".
	Notes []string
}

// Stream writes the draws of one chain in CmdStan's CSV layout as they are
// made: the configuration comments and the header row when it is created,
// then each draw, the adaptation block when the sampler ends its warm-up
// (WriteAdaptation) and CmdStan's elapsed-time block when it is closed.
// Finished rows are written to the underlying writer whole, at the latest
// FlushInterval after they were made, when 64 KiB have gathered, and at
// Close, so a crash or a kill leaves a valid CSV file holding every draw but
// those of the last second, and an interrupt that reaches Close loses none.
//
// The methods of a Stream are safe for concurrent use; a chain's draws
// should come from one goroutine so that their order is the chain's.
type Stream struct {
	checkedRows
	mu      sync.Mutex
	w       io.Writer
	closer  io.Closer
	pending []byte // finished rows not yet written
	err     error  // first write error; sticky
	closed  bool
	draws   int
	created time.Time
	elapsed *[2]time.Duration
	stop    chan struct{}
	done    chan struct{}
}

// NewStream writes config as "# key = value" comment lines and the header
// row of layout l to w and returns a Stream for the draws. If w is an
// io.Closer, Close closes it.
func NewStream(w io.Writer, l Layout, config []Setting) (*Stream, error) {
	header, err := csvHeader(w, l, config)
	if err != nil {
		return nil, err
	}
	s := &Stream{w: w, checkedRows: checkedRows{layout: l.clone()}, created: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	s.sink = s
	if c, ok := w.(io.Closer); ok {
		s.closer = c
	}
	if _, err := io.WriteString(w, header); err != nil {
		return nil, fmt.Errorf("draws: writing the header: %w", err)
	}
	go s.flushEvery(FlushInterval)
	return s, nil
}

// CreateStream creates (or truncates) the file at path and returns a Stream
// writing to it, as NewStream; Close closes the file. Creating the file is
// the check that the path is writable, so callers create their streams
// before they start sampling.
func CreateStream(path string, l Layout, config []Setting) (*Stream, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	if err := checkSettings(config); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("draws: %w", err)
	}
	s, err := NewStream(f, l, config)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("draws: %s: %w", path, err)
	}
	return s, nil
}

// CreateStreams creates one Stream per chain with the file names of
// ChainFileNames(base, chains) when chains > 1, or base itself for one
// chain, each with config and a "chain_id = k" setting (1-based) as
// CmdStan writes. If a file cannot be created, the streams already created
// are closed and removed.
func CreateStreams(base string, chains int, l Layout, config []Setting) ([]*Stream, []string, error) {
	if chains < 1 {
		return nil, nil, fmt.Errorf("draws: %d chains, need at least one", chains)
	}
	names := []string{base}
	if chains > 1 {
		names = ChainFileNames(base, chains)
	}
	streams := make([]*Stream, chains)
	for c, name := range names {
		cfg := append(config[:len(config):len(config)], Setting{"chain_id", strconv.Itoa(c + 1)})
		s, err := CreateStream(name, l, cfg)
		if err != nil {
			for _, done := range streams[:c] {
				done.Close()
			}
			for _, n := range names[:c] {
				os.Remove(n)
			}
			return nil, nil, err
		}
		streams[c] = s
	}
	return streams, names, nil
}

func checkSettings(config []Setting) error {
	for _, s := range config {
		if strings.ContainsAny(s.Key, "=\n\r") || strings.ContainsAny(s.Value, "\n\r") || strings.TrimSpace(s.Key) == "" {
			return fmt.Errorf("draws: setting %q = %q: keys must be non-empty without '=' or newlines, values without newlines", s.Key, s.Value)
		}
	}
	return nil
}

func writeSettings(b *strings.Builder, config []Setting) {
	for _, s := range config {
		fmt.Fprintf(b, "# %s = %s\n", strings.TrimSpace(s.Key), strings.TrimSpace(s.Value))
	}
}

// Layout returns a copy of the layout of s.
func (s *Stream) Layout() Layout { return s.layout.clone() }

// Len returns the number of draws written so far.
func (s *Stream) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draws
}

// writeRow adds a checked draw to the rows waiting to be written.
func (s *Stream) writeRow(params, diagnostics []float64, k int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	s.pending = appendRow(s.pending, s.layout.Transdimensional, params, diagnostics, k)
	s.draws++
	if len(s.pending) >= streamBuffer {
		s.flushLocked()
	}
	return s.err
}

// usable reports why s cannot take more output, if it cannot.
func (s *Stream) usable() error {
	if s.closed {
		return errors.New("draws: stream is closed")
	}
	return s.err
}

// WriteAdaptation writes the adaptation block a; CmdStan writes it after
// the warm-up draws (if saved) and before the first kept draw.
func (s *Stream) WriteAdaptation(a Adaptation) error {
	if a.InvMetricDiag != nil && a.InvMetricDense != nil {
		return errors.New("draws: adaptation has both a diagonal and a dense inverse metric")
	}
	for _, n := range a.Notes {
		if strings.ContainsAny(n, "\n\r") {
			return fmt.Errorf("draws: adaptation note %q has a newline", n)
		}
	}
	var b []byte
	b = append(b, "# Adaptation terminated\n# Step size = "...)
	b = appendValue(b, a.StepSize)
	b = append(b, '\n')
	joined := func(v []float64) {
		b = append(b, "# "...)
		for i, x := range v {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendValue(b, x)
		}
		b = append(b, '\n')
	}
	switch {
	case a.InvMetricDiag != nil:
		b = append(b, "# Diagonal elements of inverse mass matrix:\n"...)
		joined(a.InvMetricDiag)
	case a.InvMetricDense != nil:
		b = append(b, "# Elements of inverse mass matrix:\n"...)
		for _, row := range a.InvMetricDense {
			joined(row)
		}
	}
	for _, n := range a.Notes {
		b = append(b, "# "...)
		b = append(b, n...)
		b = append(b, '\n')
	}
	return s.addComment(b)
}

// addComment queues comment lines and writes them with the rows before.
func (s *Stream) addComment(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	s.pending = append(s.pending, b...)
	s.flushLocked()
	return s.err
}

// WriteSettings writes settings as "# key = value" comment lines where the
// stream is, for what is known only after the header: ReadCSV returns them
// with the settings of the header.
func (s *Stream) WriteSettings(settings []Setting) error {
	if err := checkSettings(settings); err != nil {
		return err
	}
	var b strings.Builder
	writeSettings(&b, settings)
	return s.addComment([]byte(b.String()))
}

// MarkInterrupted writes the comment line "# interrupted = reason" (reason
// "true" if empty), telling readers that the run stopped before its end:
// the draws before it are valid, but the chain is shorter than configured.
func (s *Stream) MarkInterrupted(reason string) error {
	return s.addComment([]byte(interruptedLine(reason)))
}

// interruptedLine is the comment line "# interrupted = reason" of
// MarkInterrupted, reason on one line ("true" if empty).
func interruptedLine(reason string) string {
	reason = strings.TrimSpace(strings.NewReplacer("\n", " ", "\r", " ").Replace(reason))
	if reason == "" {
		reason = "true"
	}
	return "# " + Interrupted + " = " + reason + "\n"
}

// SetElapsed records the wall-clock durations of the warm-up and sampling
// phases that Close writes in the elapsed-time block. Without it, Close
// writes the time since the stream was created as sampling time.
func (s *Stream) SetElapsed(warmup, sampling time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.elapsed = &[2]time.Duration{warmup, sampling}
}

// Flush writes every finished row to the underlying writer.
func (s *Stream) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.err
	}
	s.flushLocked()
	return s.err
}

func (s *Stream) flushLocked() {
	if len(s.pending) == 0 || s.err != nil {
		return
	}
	if _, err := s.w.Write(s.pending); err != nil {
		s.err = fmt.Errorf("draws: writing draws: %w", err)
	}
	s.pending = s.pending[:0]
}

func (s *Stream) flushEvery(d time.Duration) {
	defer close(s.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.Flush()
		}
	}
}

// Close writes CmdStan's elapsed-time block, flushes, and closes the
// underlying writer if it is an io.Closer. It returns the first error of
// any write; closing twice is a no-op.
func (s *Stream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return s.err
	}
	warm, samp := time.Duration(0), time.Since(s.created)
	if s.elapsed != nil {
		warm, samp = s.elapsed[0], s.elapsed[1]
	}
	s.pending = appendElapsed(s.pending, warm, samp)
	s.flushLocked()
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	if s.closer != nil {
		if err := s.closer.Close(); err != nil && s.err == nil {
			s.err = fmt.Errorf("draws: %w", err)
		}
	}
	return s.err
}

// appendElapsed appends CmdStan's elapsed-time block:
//
//	#
//	#  Elapsed Time: 0.012 seconds (Warm-up)
//	#                0.034 seconds (Sampling)
//	#                0.046 seconds (Total)
//	#
func appendElapsed(b []byte, warmup, sampling time.Duration) []byte {
	sec := func(d time.Duration) string {
		return strconv.FormatFloat(math.Max(d.Seconds(), 0), 'f', 3, 64)
	}
	b = append(b, "# \n"...)
	b = append(b, "#  Elapsed Time: "+sec(warmup)+" seconds (Warm-up)\n"...)
	b = append(b, "#                "+sec(sampling)+" seconds (Sampling)\n"...)
	b = append(b, "#                "+sec(warmup+sampling)+" seconds (Total)\n"...)
	return append(b, "# \n"...)
}

// appendRow appends one CSV row: diagnostics, the model index of a
// transdimensional draw, parameters.
func appendRow(buf []byte, transdimensional bool, params, diagnostics []float64, k int) []byte {
	start := len(buf)
	sep := func() {
		if len(buf) > start {
			buf = append(buf, ',')
		}
	}
	for _, v := range diagnostics {
		sep()
		buf = appendValue(buf, v)
	}
	if transdimensional {
		sep()
		buf = strconv.AppendInt(buf, int64(k), 10)
	}
	for _, v := range params {
		sep()
		buf = appendValue(buf, v)
	}
	return append(buf, '\n')
}
