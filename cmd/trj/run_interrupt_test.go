package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// signalOn is a progress writer that sends the process sig when a line
// with trigger is written, and waits until ctx has seen it, so that the
// stop lands at that point of the run however fast the machine.
type signalOn struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	trigger string
	sig     syscall.Signal
	ctx     context.Context
	sent    bool
}

func (w *signalOn) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if !w.sent && strings.Contains(string(b), w.trigger) {
		w.sent = true
		syscall.Kill(os.Getpid(), w.sig)
		<-w.ctx.Done()
	}
	return len(b), nil
}

func (w *signalOn) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestRunSASShardSIGTERM stops a shard of "trj run sas" by SIGTERM after
// its first proposal type: it must exit with exitInterrupted, say
// "interrupted" and keep that proposal type in its partial file, marked
// incomplete, which trj merge refuses.
func TestRunSASShardSIGTERM(t *testing.T) {
	skipInRacePass(t, "a whole small SAS run; the race pass has nothing more to check than the cancellation")
	dir := t.TempDir()
	partial := filepath.Join(dir, "part.json")
	ctx, stop := signalContext()
	defer stop()
	stderr := &signalOn{trigger: "chains affine", sig: syscall.SIGTERM, ctx: ctx}
	var out bytes.Buffer
	code := run(ctx, []string{"run", "sas", "-steps", "20", "-chains", "2", "-train-draws", "100",
		"-eval-draws", "50", "-bridge-reps", "2", "-train-iters", "5", "-scatter-sources", "2", "-shard", "1/2", "-o", partial},
		&out, stderr, testBackend())
	if code != exitInterrupted || !strings.Contains(stderr.String(), "trj run sas: interrupted") {
		t.Fatalf("code %d, stderr %q", code, stderr.String())
	}
	p, err := readPartial(partial)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Incomplete || p.Stopped != "interrupted" || !strings.Contains(string(p.Payload), `"affine"`) {
		t.Errorf("partial file: incomplete %v, stopped %q, payload %.200s", p.Incomplete, p.Stopped, p.Payload)
	}
	code, _, errs := runArgs("merge", "-out", dir, partial)
	if code == exitOK || !strings.Contains(errs, "stopped before its end") {
		t.Errorf("trj merge of the interrupted shard: code %d, %s", code, errs)
	}
}

// TestRunSASShardOneOfOne: -shard 1/1 is a shard too (a batch array of
// one task) and writes its partial file, which trj merge takes alone.
func TestRunSASShardOneOfOne(t *testing.T) {
	skipInRacePass(t, "a whole small SAS run and its merge")
	dir := t.TempDir()
	partial := filepath.Join(dir, "part.json")
	code, _, stderr := runArgs("run", "sas", "-quiet", "-steps", "20", "-chains", "2", "-train-draws", "100",
		"-eval-draws", "50", "-bridge-reps", "2", "-train-iters", "5", "-scatter-sources", "2", "-shard", "1/1", "-o", partial)
	if code != exitOK {
		t.Fatalf("-shard 1/1 -o: code %d, %s", code, stderr)
	}
	code, stdout, stderr := runArgs("merge", "-out", dir, "-json", filepath.Join(dir, "all.json"), partial)
	if code != exitOK || !strings.Contains(stdout, "affine") {
		t.Errorf("trj merge of the one shard: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
