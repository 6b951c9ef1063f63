package docs_test

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/trjgo/trj/models"
	"github.com/trjgo/trj/ppl"
)

// builtModels caches the gallery's models built on their embedded data:
// building the recursions' graphs (garch11, the HMMs) takes seconds, and
// TestGalleryOutputs and TestPosteriordbTable both need every model.
var builtModels sync.Map // entry name → ppl.Model

// buildModel returns e's model on its embedded data, built once per run.
func buildModel(e models.Entry) (ppl.Model, error) {
	if m, ok := builtModels.Load(e.Name); ok {
		return m.(ppl.Model), nil
	}
	m, err := e.New("")
	if err != nil {
		return nil, err
	}
	builtModels.Store(e.Name, m)
	return m, nil
}

// TestPosteriordbTable checks the generated table of posteriordb's
// posteriors in gallery/README.md (go run ./bench/pdbtable -out
// docs/gallery/README.md): it lists exactly the registry's posteriordb
// entries, each once, with the dimension of the model as it is now built
// and a link to its page. Timings are measurements, not checked here.
func TestPosteriordbTable(t *testing.T) {
	if raceDetector && testing.Short() {
		t.Skip("skipped with -race -short: builds every model single-threaded (run without -race)")
	}
	text := readText(t, galleryDir+"/README.md")
	const begin, end = "<!-- pdbtable begin", "<!-- pdbtable end -->"
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("gallery/README.md has no %q … %q block", begin, end)
	}
	row := regexp.MustCompile(`^\| \[([^\]]+)\]\(([^)]+)\.md\)[^|]* \| (\d+) \|`)
	rows := map[string][2]string{} // posterior → page, dimension
	for _, line := range strings.Split(text[i:j], "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("the table lists %s twice", m[1])
		}
		rows[m[1]] = [2]string{m[2], m[3]}
	}
	want := 0
	for _, e := range models.All() {
		if e.Posterior == "" {
			continue
		}
		want++
		r, ok := rows[e.Posterior]
		if !ok {
			t.Errorf("the table lacks %s; run go run ./bench/pdbtable -out docs/gallery/README.md", e.Posterior)
			continue
		}
		m, err := buildModel(e)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if r[0] != e.Name {
			t.Errorf("%s links %s.md, its page is %s.md", e.Posterior, r[0], e.Name)
		}
		if d, _ := strconv.Atoi(r[1]); d != m.Dim() {
			t.Errorf("%s: dimension %s in the table, the model has %d", e.Posterior, r[1], m.Dim())
		}
	}
	if len(rows) != want {
		t.Errorf("the table has %d posteriors, the registry %d", len(rows), want)
	}
}
