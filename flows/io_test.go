package flows

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

func testFlows(t *testing.T) (*Affine, *RQMA, *ConditionalRQMA) {
	a, err := FitAffine([][]float64{{1, 2}, {2, 1}, {0, 0}, {3, 5}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := randomRQMA(t, 2, RQMAConfig{Layers: 2, Bins: 5, HiddenPerDim: 3, SigmoidScale: 1.5}, 3)
	c := randomConditional(t, RQMAConfig{Layers: 2, Bins: 4, HiddenPerDim: 2}, 4)
	return a, r, c
}

func saved(t *testing.T, f Flow) []byte {
	var b bytes.Buffer
	if err := Save(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSaveLoadRoundTrip(t *testing.T) {
	a, r, c := testFlows(t)
	x := []float64{0.3, -0.7}
	za, zb := make([]float64, 2), make([]float64, 2)

	a2, err := LoadAffine(bytes.NewReader(saved(t, a)))
	if err != nil {
		t.Fatal(err)
	}
	l1, _ := a.Forward(x, za)
	l2, _ := a2.Forward(x, zb)
	if l1 != l2 || za[0] != zb[0] || za[1] != zb[1] {
		t.Errorf("affine differs after load")
	}

	r2, err := LoadRQMA(bytes.NewReader(saved(t, r)))
	if err != nil {
		t.Fatal(err)
	}
	l1, _ = r.Forward(x, za)
	l2, _ = r2.Forward(x, zb)
	if l1 != l2 || za[0] != zb[0] || za[1] != zb[1] || r2.Config() != r.Config() {
		t.Errorf("RQMA differs after load")
	}

	c2, err := LoadConditionalRQMA(bytes.NewReader(saved(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	xi, z1, z2 := []float64{0.1, 0.2, -0.4}, make([]float64, 3), make([]float64, 3)
	for k := 0; k < 3; k++ {
		l1, _ = c.Forward(k, xi, z1)
		l2, _ = c2.Forward(k, xi, z2)
		if l1 != l2 || z1[0] != z2[0] || z1[2] != z2[2] {
			t.Errorf("conditional flow differs after load (model %d)", k)
		}
	}
}

func TestLoadRejects(t *testing.T) {
	a, r, c := testFlows(t)
	for name, data := range map[string][]byte{"affine": saved(t, a), "rqma": saved(t, r), "conditional": saved(t, c)} {
		// Every truncation fails.
		for _, n := range []int{0, 5, 8, 20, len(data) / 2, len(data) - 1} {
			if _, err := Load(bytes.NewReader(data[:n])); !errors.Is(err, ErrFormat) {
				t.Errorf("%s truncated to %d bytes: error %v", name, n, err)
			}
		}
		// Flipping any single byte fails (checksum, magic or version).
		for _, i := range []int{0, 9, 13, len(data) / 2, len(data) - 2} {
			bad := append([]byte(nil), data...)
			bad[i] ^= 0x40
			if _, err := Load(bytes.NewReader(bad)); !errors.Is(err, ErrFormat) {
				t.Errorf("%s with byte %d corrupted: error %v", name, i, err)
			}
		}
		// Trailing garbage fails.
		if _, err := Load(bytes.NewReader(append(append([]byte(nil), data...), 0))); !errors.Is(err, ErrFormat) {
			t.Errorf("%s with a trailing byte: error %v", name, err)
		}
		// A future version with a valid checksum fails.
		v := append([]byte(nil), data[:len(data)-4]...)
		binary.LittleEndian.PutUint32(v[8:], FormatVersion+1)
		v = binary.LittleEndian.AppendUint32(v, crc32.ChecksumIEEE(v))
		if _, err := Load(bytes.NewReader(v)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s with version %d: error %v", name, FormatVersion+1, err)
		}
	}
	// Mismatched kinds.
	if _, err := LoadRQMA(bytes.NewReader(saved(t, a))); !errors.Is(err, ErrFormat) {
		t.Errorf("LoadRQMA of an affine file: %v", err)
	}
	if _, err := LoadAffine(bytes.NewReader(saved(t, r))); !errors.Is(err, ErrFormat) {
		t.Errorf("LoadAffine of an RQMA file: %v", err)
	}
	if _, err := LoadConditionalRQMA(bytes.NewReader(saved(t, r))); !errors.Is(err, ErrFormat) {
		t.Errorf("LoadConditionalRQMA of an RQMA file: %v", err)
	}
	// A file whose masked weights were made non-zero (valid checksum) fails.
	d := saved(t, r)
	body := append([]byte(nil), d[:len(d)-4]...)
	off := len(body) - 8*len(r.params)
	for i, m := range r.net.m1 {
		if m == 0 {
			binary.LittleEndian.PutUint64(body[off+8*(r.net.oW1+i):], 0x3ff0000000000000) // 1.0
			break
		}
	}
	body = binary.LittleEndian.AppendUint32(body, crc32.ChecksumIEEE(body))
	if _, err := Load(bytes.NewReader(body)); !errors.Is(err, ErrFormat) {
		t.Errorf("non-zero masked weight: error %v", err)
	}
}

// TestLoadHugeDimensions checks that absurd dimensions in a file with a
// valid checksum fail cleanly instead of allocating.
func TestLoadHugeDimensions(t *testing.T) {
	_, r, _ := testFlows(t)
	d := saved(t, r)
	body := append([]byte(nil), d[:len(d)-4]...)
	// Layout: magic(8) version(4) kind(4) n(4) layers(4) bins(4) hidden(4).
	binary.LittleEndian.PutUint32(body[28:], 1<<16) // hidden per dimension
	body = binary.LittleEndian.AppendUint32(body, crc32.ChecksumIEEE(body))
	if _, err := Load(bytes.NewReader(body)); !errors.Is(err, ErrFormat) {
		t.Errorf("huge hidden width: error %v", err)
	}
}

func TestSaveNil(t *testing.T) {
	var buf bytes.Buffer
	for _, f := range []Flow{nil, (*Affine)(nil), (*RQMA)(nil), (*ConditionalRQMA)(nil), (*GraphFlow)(nil)} {
		if err := Save(&buf, f); err == nil {
			t.Errorf("Save(%T nil) succeeded", f)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("Save of nil flows wrote %d bytes", buf.Len())
	}
}
