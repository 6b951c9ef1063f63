package flows

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestSaveSetLoadSet(t *testing.T) {
	a, err := NewAffine([]float64{1, 2}, mat.NewSymDense(2, []float64{2, 0.3, 0.3, 1}))
	if err != nil {
		t.Fatal(err)
	}
	r := randomRQMA(t, 3, RQMAConfig{Layers: 1, Bins: 3, HiddenPerDim: 2}, 5)
	set := []Labeled{{Model: "k=1", Dim: 2, Flow: a}, {Model: "k=2", Dim: 3, Flow: r}}
	var buf bytes.Buffer
	if err := SaveSet(&buf, set); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	got, err := LoadSet(bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSet(got, []string{"k=1", "k=2"}, []int{2, 3}); err != nil {
		t.Error(err)
	}
	if err := CheckSet(got, []string{"k=2", "k=1"}, []int{3, 2}); err == nil {
		t.Error("CheckSet accepted models in the wrong order")
	}
	z1, z2 := make([]float64, 3), make([]float64, 3)
	theta := []float64{0.1, -0.3, 0.7}
	ld1, _ := r.Forward(theta, z1)
	ld2, _ := got[1].Flow.(*RQMA).Forward(theta, z2)
	if ld1 != ld2 || z1[2] != z2[2] {
		t.Errorf("loaded RQMA gives %v, %v; saved %v, %v", z2, ld2, z1, ld1)
	}
	// Errors: wrong Dim, duplicate labels, nil flows; a set read by Load,
	// a single flow read by LoadSet, a corrupt set.
	for _, bad := range [][]Labeled{
		{{Model: "a", Dim: 3, Flow: a}},
		{{Model: "a", Dim: 2, Flow: a}, {Model: "a", Dim: 2, Flow: a}},
		{{Model: "a", Dim: 2, Flow: (*Affine)(nil)}},
	} {
		if err := SaveSet(&bytes.Buffer{}, bad); err == nil {
			t.Errorf("SaveSet accepted %+v", bad)
		}
	}
	if _, err := Load(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), "LoadSet") {
		t.Errorf("Load of a set: %v", err)
	}
	var one bytes.Buffer
	if err := Save(&one, a); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSet(bytes.NewReader(one.Bytes()), nil); err == nil || !strings.Contains(err.Error(), "Load") {
		t.Errorf("LoadSet of a single flow: %v", err)
	}
	// A reader used once is at its end: the second load says so.
	rd := bytes.NewReader(data)
	if _, err := LoadSet(rd, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSet(rd, nil); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "already read to its end") {
		t.Errorf("second LoadSet from one reader: %v", err)
	}
	bad := append([]byte(nil), data...)
	bad[len(bad)/2] ^= 1
	if _, err := LoadSet(bytes.NewReader(bad), nil); !errors.Is(err, ErrFormat) {
		t.Errorf("corrupt set: %v", err)
	}
}

// TestSeveralSaves checks the error for two Save calls into one stream, and
// that a file of another format version fails naming the version.
func TestSeveralSaves(t *testing.T) {
	a, err := NewAffine([]float64{1}, mat.NewSymDense(1, []float64{2}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Save(&buf, a); err != nil {
		t.Fatal(err)
	}
	if err := Save(&buf, a); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bytes.NewReader(buf.Bytes())); err == nil || !strings.Contains(err.Error(), "SaveSet") {
		t.Errorf("two Save calls: %v", err)
	}
	var one bytes.Buffer
	if err := Save(&one, a); err != nil {
		t.Fatal(err)
	}
	v2 := append([]byte(nil), one.Bytes()...)
	v2[8] = 2
	if _, err := Load(bytes.NewReader(v2)); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("version 2 file: %v", err)
	}
}
