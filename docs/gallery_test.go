package docs_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trjgo/trj/models"
)

// galleryDir holds one page per model, indexed by its README.md.
const galleryDir = "gallery"

// notModels are directories under models/ that hold shared code or data, not a
// model of the gallery.
var notModels = map[string]bool{"experiment": true, "datasets": true}

// TestGallery checks that the gallery covers the models: every model of
// the registry (trj sample -model NAME) has the page NAME.md, every model
// package under models/ has a page whose code comes from it, and the index
// links every page. To add a model, copy a page of the same kind, change
// its source marker and text, link it from README.md and run
// go test ./docs -run TestMarkdown -update.
func TestGallery(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(galleryDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	content := map[string]string{} // page base name → text
	for _, p := range pages {
		content[filepath.Base(p)] = readText(t, p)
	}
	index, ok := content["README.md"]
	if !ok {
		t.Fatal("gallery/README.md is missing")
	}

	for _, name := range models.Names() {
		if _, ok := content[name+".md"]; !ok {
			t.Errorf("model %q (trj sample -model %s) has no page gallery/%s.md", name, name, name)
		}
	}

	// Every model package is the source of some page's code.
	dirs, err := os.ReadDir(filepath.Join(repoRoot, "models"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || notModels[d.Name()] || !hasGoFiles(t, filepath.Join(repoRoot, "models", d.Name())) {
			continue
		}
		marker := regexp.MustCompile(`<!--\s*source\s+models/` + regexp.QuoteMeta(d.Name()) + `[/\s]`)
		found := false
		for _, c := range content {
			if marker.MatchString(c) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("package models/%s has no gallery page with a <!-- source models/%s ... --> block", d.Name(), d.Name())
		}
	}

	for base := range content {
		if base == "README.md" {
			continue
		}
		if !strings.Contains(index, "("+base+")") {
			t.Errorf("gallery/README.md does not link %s", base)
		}
	}
}

// hasGoFiles reports whether dir holds non-test Go files.
func hasGoFiles(t *testing.T, dir string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	return false
}

// TestGalleryOutputs checks that the summary table pasted into each
// registry model's page lists exactly the parameters of the model as it is
// now built from its own (embedded) data, so that a changed model cannot
// keep a stale output.
func TestGalleryOutputs(t *testing.T) {
	if raceDetector && testing.Short() {
		// Builds every gallery model, one after another, to read its
		// parameter names: most of this package's time under the race
		// detector, with nothing concurrent to check.
		t.Skip("skipped with -race -short (run without -race)")
	}
	for _, e := range models.All() {
		page := filepath.Join(galleryDir, e.Name+".md")
		names, ok := summaryNames(t, page)
		if !ok {
			continue // no pasted output
		}
		m, err := buildModel(e)
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if want := m.ParamNames(); !slices.Equal(names, want) {
			t.Errorf("%s: the output pasted in %s lists %v, the model has %v; paste a fresh run", e.Name, page, names, want)
		}
	}
}

// summaryNames returns the row names, lp__ excluded, of the first
// stansummary table (the rows after a header line starting with "Mean") in
// a ```text block of page.
func summaryNames(t *testing.T, page string) ([]string, bool) {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inText, inTable := false, false
	var names []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			if inTable {
				return names, true
			}
			inText = strings.TrimPrefix(line, "```") == "text" && !inText
		case inText && !inTable && strings.HasPrefix(strings.TrimSpace(line), "Mean "):
			inTable = true
		case inTable && strings.TrimSpace(line) == "":
			return names, true
		case inTable:
			if name := strings.Fields(line)[0]; name != "lp__" {
				names = append(names, name)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names, inTable
}
