package runs

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// marker records the marks and the closing of a draws file.
type marker struct{ log []string }

func (m *marker) MarkInterrupted(reason string) error {
	m.log = append(m.log, "mark "+reason)
	return nil
}

func (m *marker) close() error {
	m.log = append(m.log, "close")
	return nil
}

// TestCloseDraws: a chain stopped early marks its file with the reason
// before closing it; a finished chain only closes it; a failing mark is
// returned and the file still closed.
func TestCloseDraws(t *testing.T) {
	var m marker
	if err := CloseDraws(&m, context.Canceled, m.close); err != nil || !slices.Equal(m.log, []string{"mark context canceled", "close"}) {
		t.Errorf("stopped: %v, %v", err, m.log)
	}
	m.log = nil
	if err := CloseDraws(&m, nil, m.close); err != nil || !slices.Equal(m.log, []string{"close"}) {
		t.Errorf("finished: %v, %v", err, m.log)
	}
	bad := errors.New("disk full")
	closed := false
	err := CloseDraws(failing{bad}, context.Canceled, func() error { closed = true; return nil })
	if !errors.Is(err, bad) || !closed {
		t.Errorf("failing mark: %v, closed %v", err, closed)
	}
}

type failing struct{ err error }

func (f failing) MarkInterrupted(string) error { return f.err }

// TestSeries: every chain keeps every step, whatever the lengths, and the
// buffer is reused.
func TestSeries(t *testing.T) {
	x := Series(nil, []int{3, 1, 0}, func(c, i int) float64 { return float64(10*c + i) })
	if len(x) != 3 || !slices.Equal(x[0], []float64{0, 1, 2}) || !slices.Equal(x[1], []float64{10}) || len(x[2]) != 0 {
		t.Fatalf("series %v", x)
	}
	p := &x[0][0]
	y := Series(x, []int{2, 1, 0}, func(c, i int) float64 { return -1 })
	if &y[0][0] != p || !slices.Equal(y[0], []float64{-1, -1}) {
		t.Errorf("reused series %v", y)
	}
}

// TestMergeStatus: the merged result is complete only when every part is,
// and names the partial parts and why they stopped.
func TestMergeStatus(t *testing.T) {
	if ok, why := MergeStatus([]Status{{"part 1", true, ""}, {"part 2", true, ""}}); !ok || why != "" {
		t.Errorf("whole parts: %v, %q", ok, why)
	}
	ok, why := MergeStatus([]Status{{"part 1", false, "context canceled"}, {"part 2", true, ""}, {"part 3", false, ""}})
	if ok || why != "part 1: context canceled; part 3: stopped early" {
		t.Errorf("partial parts: %v, %q", ok, why)
	}
}
