package experiment

import (
	"bytes"
	"strings"
	"testing"
)

func TestProgressTerminalRedraws(t *testing.T) {
	var buf bytes.Buffer
	p := &Progress{w: &buf, tty: true}
	bar := p.Stage("train", 1000)
	for range 1000 {
		bar.Add(1)
	}
	bar.Done()
	out := buf.String()
	if !strings.Contains(out, "100%") || strings.Count(out, "\n") != 1 {
		t.Errorf("progress output %q", out)
	}
	if n := strings.Count(out, "\r"); n > 102 {
		t.Errorf("%d redraws for 1000 updates, want at most one per percent", n)
	}
}
