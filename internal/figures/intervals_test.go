package figures

import (
	"errors"
	"math"
	"path/filepath"
	"testing"
)

func TestIntervalsBadInput(t *testing.T) {
	dir := t.TempDir()
	good := []Interval{{Name: "a", Value: 0.5, Low: 0.4, High: 0.6, Ref: math.NaN()}}
	if err := Intervals(filepath.Join(dir, "ok.svg"), "t", good); err != nil {
		t.Fatal(err)
	}
	for name, rows := range map[string][]Interval{
		"empty":     nil,
		"no name":   {{Value: 0.5, Low: 0.4, High: 0.6}},
		"unordered": {{Name: "a", Value: 0.7, Low: 0.4, High: 0.6}},
		"NaN":       {{Name: "a", Value: math.NaN(), Low: 0.4, High: 0.6}},
	} {
		if err := Intervals(filepath.Join(dir, "bad.svg"), "t", rows); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := Intervals(filepath.Join(dir, "bad.pdf"), "t", good); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("pdf: got %v", err)
	}
}
