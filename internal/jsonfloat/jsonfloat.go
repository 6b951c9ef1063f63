// Package jsonfloat writes float64 values to JSON whatever they are:
// finite values as numbers, NaN and ±Inf as the strings "NaN", "+Inf" and
// "-Inf" (encoding/json refuses them as numbers), so that a result whose
// diagnostics are not finite is still written and reads back the same.
// pipeline.Float is its exported form; the types here serve the JSON
// forms of structs whose fields stay float64.
package jsonfloat

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Marshal returns v as JSON: a number, or a string when v is not finite.
func Marshal(v float64) ([]byte, error) {
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(v)
}

// Unmarshal reads what Marshal writes. It also reads null as NaN, which
// is how files written before strings were used held a value that was not
// finite.
func Unmarshal(b []byte) (float64, error) {
	if string(b) == "null" {
		return math.NaN(), nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(math.IsNaN(v) || math.IsInf(v, 0)) {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		return v, nil
	}
	var v float64
	err := json.Unmarshal(b, &v)
	return v, err
}

// Float is a float64 written by Marshal.
type Float float64

// MarshalJSON writes f (see Marshal).
func (f Float) MarshalJSON() ([]byte, error) { return Marshal(float64(f)) }

// UnmarshalJSON reads what MarshalJSON writes.
func (f *Float) UnmarshalJSON(b []byte) error {
	v, err := Unmarshal(b)
	if err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

// Slice is a []float64 whose elements are written by Marshal; a nil Slice
// is written as null (and omitted by omitempty), like a nil []float64.
type Slice []float64

// MarshalJSON writes s (see Marshal).
func (s Slice) MarshalJSON() ([]byte, error) {
	finite := true
	for _, v := range s {
		finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	if finite { // the common case, in encoding/json's own loop
		return json.Marshal([]float64(s))
	}
	b := make([]byte, 0, 2+len(s)*8)
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		e, err := Marshal(v)
		if err != nil {
			return nil, err
		}
		b = append(b, e...)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Slice) UnmarshalJSON(b []byte) error {
	return unmarshalEach(b, (*[]float64)(s), func(v Float) float64 { return float64(v) })
}

// unmarshalEach decodes b, a JSON array of E or null, into *dst, each
// element converted by conv; null leaves *dst nil, and an error leaves it
// unchanged.
func unmarshalEach[E, T any](b []byte, dst *[]T, conv func(E) T) error {
	var raw []E
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*dst = nil
		return nil
	}
	out := make([]T, len(raw))
	for i, v := range raw {
		out[i] = conv(v)
	}
	*dst = out
	return nil
}

// Matrix is a [][]float64 whose elements are written by Marshal.
type Matrix [][]float64

// MarshalJSON writes m (see Marshal).
func (m Matrix) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	rows := make([]Slice, len(m))
	for i, r := range m {
		rows[i] = r
	}
	return json.Marshal(rows)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Matrix) UnmarshalJSON(b []byte) error {
	return unmarshalEach(b, (*[][]float64)(m), func(r Slice) []float64 { return r })
}
