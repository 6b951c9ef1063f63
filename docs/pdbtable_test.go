package docs_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/trjgo/trj/models"
)

// TestPosteriordbTable checks the generated table of posteriordb's
// posteriors in gallery/README.md (go run ./bench/pdbtable -out
// docs/gallery/README.md): it lists exactly the registry's posteriordb
// entries, each once, with the dimension of the model as it is now built
// and a link to its page. Timings are measurements, not checked here.
func TestPosteriordbTable(t *testing.T) {
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
		m, err := e.New("")
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
