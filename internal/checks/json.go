package checks

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"testing"
)

// snakeKey is what every JSON key trj writes looks like.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// SnakeKeys reports every key of the JSON value v (as encoding/json
// decodes into an any), at any depth, that is not snake_case; path names
// v in the errors. The keys of the objects that the keys named in data
// hold are data (model labels, transport names, setting paths), not field
// names: only their values are checked.
func SnakeKeys(tb testing.TB, v any, path string, data map[string]bool) {
	tb.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !snakeKey.MatchString(k) {
				tb.Errorf("key %q at %s is not snake_case", k, path)
			}
			if m, ok := e.(map[string]any); ok && data[k] {
				for dk, de := range m {
					SnakeKeys(tb, de, path+"."+k+"."+dk, data)
				}
				continue
			}
			SnakeKeys(tb, e, path+"."+k, data)
		}
	case []any:
		for _, e := range x {
			SnakeKeys(tb, e, path+"[]", data)
		}
	}
}

// SnakeCaseJSON writes a value's JSON with write, checks its keys as
// SnakeKeys does (from the root, "$") and returns the JSON; a failed write
// or JSON that does not decode ends the test.
func SnakeCaseJSON(tb testing.TB, write func(io.Writer) error, data map[string]bool) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		tb.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		tb.Fatal(err)
	}
	SnakeKeys(tb, v, "$", data)
	return buf.Bytes()
}
