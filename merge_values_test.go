package trj_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trjgo/trj"
)

// TestReadResultBadInput: ReadResult refuses what is not exactly one
// result.
func TestReadResultBadInput(t *testing.T) {
	one := `{"Labels": ["a", "b"], "Fingerprint": "f"}`
	if _, err := trj.ReadResult(strings.NewReader(one + "\n")); err != nil {
		t.Fatalf("one result: %v", err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "reading a result"},
		{"no fingerprint", `{"Labels": ["a"]}`, "not a trj result"},
		{"second result appended", one + "\n" + one, "data after the result"},
		{"trailing garbage", one + " x", "after the result"},
		{"trailing bracket", one + "]", "after the result"},
	} {
		_, err := trj.ReadResult(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	var buf bytes.Buffer
	if err := (&trj.Result{Labels: []string{"a"}, Fingerprint: "f"}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := trj.ReadResult(&buf); err != nil {
		t.Errorf("WriteJSON's output: %v", err)
	}
}
