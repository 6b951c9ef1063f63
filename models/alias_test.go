package models_test

import (
	"testing"

	"github.com/trjgo/trj/models"
)

// TestPosteriorAliases checks that each of posteriordb's 46 posteriors
// with reference draws is reachable by its posterior name (trj sample
// -model DATA-MODEL) and that the gallery name still reaches it.
func TestPosteriorAliases(t *testing.T) {
	seen := map[string]string{}
	for _, e := range models.All() {
		if e.Posterior == "" {
			continue
		}
		if other, dup := seen[e.Posterior]; dup {
			t.Errorf("posterior %s is both %s and %s", e.Posterior, other, e.Name)
		}
		seen[e.Posterior] = e.Name
		for _, name := range []string{e.Name, e.Posterior} {
			got, ok := models.Lookup(name)
			if !ok || got.Name != e.Name {
				t.Errorf("Lookup(%q) = %q, %v; want %q", name, got.Name, ok, e.Name)
			}
		}
	}
	if len(seen) != 46 {
		t.Errorf("%d posteriordb posteriors in the gallery, want 46", len(seen))
	}
	if _, ok := models.Lookup("eight_schools_centered"); !ok {
		t.Error("eight_schools_centered is gone")
	}
}
