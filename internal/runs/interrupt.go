package runs

import (
	"cmp"
	"strings"
)

// The interrupt rule of both workflows (trj.Run and selection.Run). A run
// whose context is cancelled (Ctrl-C in trj) stops each chain at its next
// check and:
//
//   - keeps every finished step of every chain: the chains are not cut to
//     the shortest, so that no finished work is lost; the estimates count
//     every step (pipeline.EstimateMean takes chains of different
//     lengths; Series builds them);
//   - marks its result partial: Complete false and Stopped the reason (the
//     context's error), in Go and in JSON ("complete", "stopped"). A
//     partial result reads back, merges (MergeStatus: the merged result is
//     partial when a part is) and prints (saying it is partial, and why)
//     like a whole one;
//   - marks each chain's draws file "# interrupted = reason" after its
//     last row (CloseDraws), the rows before it valid.

// Marker is a chain's draws file that can be marked interrupted
// (draws.Stream, draws.CSVWriter).
type Marker interface {
	MarkInterrupted(reason string) error
}

// CloseDraws ends a chain's draws file m: when the chain stopped early
// (stopped non-nil), it is marked interrupted with Reason(stopped); then
// close closes it. The first error is returned.
func CloseDraws(m Marker, stopped error, close func() error) error {
	var err error
	if stopped != nil {
		err = m.MarkInterrupted(Reason(stopped))
	}
	if cerr := close(); err == nil {
		err = cerr
	}
	return err
}

// Reason is what a result's Stopped and a draws file's interrupted mark
// record for the error that stopped a run ("" for nil).
func Reason(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Series returns one series per chain holding every finished step,
// x[c][t] = f(c, t) for t < lens[c], in buf's storage when it is large
// enough (estimates made one term or model at a time reuse it).
func Series(buf [][]float64, lens []int, f func(c, t int) float64) [][]float64 {
	if cap(buf) < len(lens) {
		buf = make([][]float64, len(lens))
	}
	buf = buf[:len(lens)]
	for c, n := range lens {
		if cap(buf[c]) < n {
			buf[c] = make([]float64, n)
		}
		buf[c] = buf[c][:n]
		for t := range n {
			buf[c][t] = f(c, t)
		}
	}
	return buf
}

// Status is a part's mark in a merge: Name names it ("part 2"), Complete
// and Stopped are its result's.
type Status struct {
	Name     string
	Complete bool
	Stopped  string
}

// MergeStatus is the interrupt rule of a merge: partial parts (interrupted
// shards) merge like whole ones, and the merged result is complete only
// when every part is; otherwise its Stopped names each partial part and
// why it stopped.
func MergeStatus(parts []Status) (complete bool, stopped string) {
	var why []string
	for _, p := range parts {
		if !p.Complete {
			why = append(why, p.Name+": "+cmp.Or(p.Stopped, "stopped early"))
		}
	}
	return len(why) == 0, strings.Join(why, "; ")
}
