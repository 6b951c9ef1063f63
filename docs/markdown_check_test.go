package docs_test

import (
	"strings"
	"testing"
)

// TestSyncMarkdown checks the checker itself on small documents.
func TestSyncMarkdown(t *testing.T) {
	snippets := map[string]string{"s": "x := 1\nfmt.Println(x)"}
	const good = "text\n\n<!-- snippet s -->\n```go\nx := 1\nfmt.Println(x)\n```\n"
	cases := []struct {
		name, doc string
		wantErr   string // substring of the first error, "" for none
	}{
		{"in sync", good, ""},
		{"stale block", strings.Replace(good, "x := 1", "x := 2", 1), "differs from its source"},
		{"unmarked go block", "```go\nfoo()\n```\n", "without a snippet"},
		{"unknown snippet", "<!-- snippet nope -->\n```go\n```\n", "no snippet"},
		{"marker without block", "<!-- snippet s -->\nprose\n", "not followed by a fenced block"},
		{"marker at end", "<!-- snippet s -->\n", "without a fenced block"},
		{"marker before text block", "<!-- snippet s -->\n```text\n```\n", "want go"},
		{"unterminated", "<!-- snippet s -->\n```go\nx := 1\n", "unterminated"},
		{"other languages pass", "```sh\ngo test ./...\n```\n", ""},
		{"missing declaration", "<!-- source docs/doc.go Nope -->\n```go\n```\n", "no declaration of Nope"},
	}
	for _, c := range cases {
		_, errs := syncMarkdown(c.doc, snippets, map[string]bool{}, false)
		switch {
		case c.wantErr == "" && len(errs) != 0:
			t.Errorf("%s: unexpected errors %v", c.name, errs)
		case c.wantErr != "" && (len(errs) == 0 || !strings.Contains(errs[0].Error(), c.wantErr)):
			t.Errorf("%s: errors %v, want one containing %q", c.name, errs, c.wantErr)
		}
	}

	// -update rewrites a stale block into the in-sync document.
	out, errs := syncMarkdown(strings.Replace(good, "x := 1", "x := 2", 1), snippets, map[string]bool{}, true)
	if len(errs) != 0 || out != good {
		t.Errorf("update: errors %v, document\n%s\nwant\n%s", errs, out, good)
	}
}

func TestDeclarations(t *testing.T) {
	// A method's signature in api mode, a function with its doc comment in
	// source mode.
	got, err := declarations("kernels", []string{"TRJ.Step"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "func (t *TRJ) Step(rng *rand.Rand, s RJState) (RJState, RJInfo)"; got != want {
		t.Errorf("api TRJ.Step = %q, want %q", got, want)
	}
	got, err = declarations("kernels/trj.go", []string{"NewTRJ"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "// NewTRJ ") || !strings.Contains(got, "func NewTRJ(cfg TRJConfig) (*TRJ, error) {") || !strings.HasSuffix(got, "}") {
		t.Errorf("source NewTRJ:\n%s", got)
	}
	if _, err := declarations("kernels", []string{"NoSuchThing"}, true); err == nil {
		t.Error("declarations found NoSuchThing")
	}
}
