package experiment

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress draws one progress bar per stage on a terminal stream (stderr).
// A nil *Progress, or one made with a nil writer, is quiet. Bars only
// report; they never influence results.
type Progress struct {
	mu  sync.Mutex
	w   io.Writer
	tty bool // redraw bars in place; otherwise one line per finished stage
}

// NewProgress returns a reporter writing to w; nil w means quiet. Bars are
// redrawn in place only when w is a terminal, so logs and CI output get one
// line per stage instead of a stream of carriage returns.
func NewProgress(w io.Writer) *Progress { return &Progress{w: w, tty: isTerminal(w)} }

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Bar is one stage's progress bar. Its methods are safe for concurrent use
// and do nothing on a nil *Bar.
type Bar struct {
	p       *Progress
	name    string
	total   int
	done    int
	shown   int // last percentage drawn
	start   time.Time
	stopped bool
}

const barWidth = 30

// Stage starts a bar for a stage of total units of work.
func (p *Progress) Stage(name string, total int) *Bar {
	if p == nil || p.w == nil {
		return nil
	}
	b := &Bar{p: p, name: name, total: max(total, 1), shown: -1, start: time.Now()}
	p.mu.Lock()
	b.draw()
	p.mu.Unlock()
	return b
}

// Add records n more units done.
func (b *Bar) Add(n int) {
	b.update(func() {
		b.done = min(b.done+n, b.total)
		if 100*b.done/b.total != b.shown {
			b.draw()
		}
	})
}

// Done completes the bar and ends its line with the stage's wall time.
func (b *Bar) Done() {
	b.update(func() {
		b.done = b.total
		if !b.p.tty {
			fmt.Fprintf(b.p.w, "%-28s done", b.name)
		} else {
			b.draw()
		}
		fmt.Fprintf(b.p.w, " %.1fs\n", time.Since(b.start).Seconds())
		b.stopped = true
	})
}

// update runs f holding the lock, unless b is nil or done.
func (b *Bar) update(f func()) {
	if b == nil {
		return
	}
	b.p.mu.Lock()
	defer b.p.mu.Unlock()
	if !b.stopped {
		f()
	}
}

// draw redraws the bar in place; the caller holds the lock.
func (b *Bar) draw() {
	if !b.p.tty {
		return
	}
	pct := 100 * b.done / b.total
	b.shown = pct
	fill := barWidth * b.done / b.total
	fmt.Fprintf(b.p.w, "\r%-28s [%s%s] %3d%%", b.name, strings.Repeat("=", fill), strings.Repeat(" ", barWidth-fill), pct)
}

// Logf prints a line of information between bars.
func (p *Progress) Logf(format string, args ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// Timer records the wall time of named stages.
type Timer struct {
	mu   sync.Mutex
	secs map[string]Float
}

// Time runs f and adds its wall time to the stage's total.
func (t *Timer) Time(stage string, f func() error) error {
	start := time.Now()
	err := f()
	d := time.Since(start).Seconds()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.secs == nil {
		t.secs = map[string]Float{}
	}
	t.secs[stage] += Float(d)
	return err
}

// Seconds returns a copy of the stage totals.
func (t *Timer) Seconds() map[string]Float {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]Float, len(t.secs))
	for k, v := range t.secs {
		out[k] = v
	}
	return out
}
