package jsonfloat

import (
	"encoding/json"
	"math"
	"testing"
)

// TestRoundTrip writes finite and non-finite values, nil and empty slices
// and matrices, and reads them back the same; finite values are written
// as encoding/json writes float64.
func TestRoundTrip(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	type doc struct {
		F  Float  `json:"f"`
		S  Slice  `json:"s"`
		E  Slice  `json:"e"`
		N  Slice  `json:"n"`
		O  Slice  `json:"o,omitempty"`
		M  Matrix `json:"m"`
		MN Matrix `json:"mn"`
	}
	in := doc{F: Float(-inf), S: Slice{0.1, nan, inf, -inf, 1e-300}, E: Slice{}, M: Matrix{{1, nan}, nil, {}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"f":"-Inf","s":[0.1,"NaN","+Inf","-Inf",1e-300],"e":[],"n":null,"m":[[1,"NaN"],null,[]],"mn":null}`
	if string(b) != want {
		t.Errorf("wrote %s, want %s", b, want)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(out)
	if err != nil || string(again) != want {
		t.Errorf("read back and written: %s (%v)", again, err)
	}
	if out.N != nil || out.E == nil || out.M[1] != nil || out.M[2] == nil {
		t.Errorf("nil and empty not kept: %+v", out)
	}
	finite := Slice{0.1, 2, 1e21, -3.5e-7}
	b1, _ := json.Marshal(finite)
	b2, _ := json.Marshal([]float64(finite))
	if string(b1) != string(b2) {
		t.Errorf("finite values written %s, encoding/json writes %s", b1, b2)
	}
	for _, bad := range []string{`"1.5"`, `"x"`, `true`, `[1]`} {
		var f Float
		if err := json.Unmarshal([]byte(bad), &f); err == nil {
			t.Errorf("Float read %s without an error", bad)
		}
	}
	var f Float
	if err := json.Unmarshal([]byte(`null`), &f); err != nil || !math.IsNaN(float64(f)) {
		t.Errorf("null read as %v (%v), want NaN", f, err)
	}
}
