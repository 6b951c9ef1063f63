package flows

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// FuzzLoad reads arbitrary bytes as a flow file: Load must return a flow
// or an error, never panic or allocate beyond what the file could hold,
// and a flow it accepts must save and load again. The bytes are read as
// given and with a valid checksum appended, so that mutations reach the
// decoder behind the checksum test; the seeds are saved flows without
// their checksum.
func FuzzLoad(f *testing.F) {
	save := func(fl Flow) []byte {
		var b bytes.Buffer
		if err := Save(&b, fl); err != nil {
			f.Fatal(err)
		}
		return b.Bytes()[:b.Len()-4]
	}
	a, err := NewAffine([]float64{1, -2}, mat.NewSymDense(2, []float64{2, 0.5, 0.5, 1}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(save(a))
	r, err := NewRQMA([]float64{0, 1}, []float64{1, 2}, RQMAConfig{Layers: 1, Bins: 3, HiddenPerDim: 2}, 1)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(save(r))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		summed := binary.LittleEndian.AppendUint32(slices.Clone(data), crc32.ChecksumIEEE(data))
		for _, in := range [][]byte{data, summed} {
			fl, err := Load(bytes.NewReader(in))
			if err != nil {
				if fl != nil {
					t.Fatal("error with a flow")
				}
				continue
			}
			var b bytes.Buffer
			if err := Save(&b, fl); err != nil {
				t.Fatalf("loaded flow %T does not save: %v", fl, err)
			}
			if _, err := Load(&b); err != nil {
				t.Fatalf("saved flow %T does not load: %v", fl, err)
			}
		}
	})
}
