package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/trjgo/trj"

var tableRowRE = regexp.MustCompile("^\\| \\[`([^`]+)`\\]")
var backtickRE = regexp.MustCompile("`([^`]+)`")

// TestImportRules checks the "may import" column of architecture.md's
// package table against the imports of the packages' non-test files, and
// that every package of the module has a row.
func TestImportRules(t *testing.T) {
	src, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string][]string{} // package → allowed trj imports; nil entry for "any"
	anyImport := map[string]bool{}
	for _, line := range strings.Split(string(src), "\n") {
		m := tableRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 3 {
			t.Errorf("architecture.md: package row with %d cells, want 3: %s", len(cells), line)
			continue
		}
		pkg := m[1]
		if pkg == "trj" {
			pkg = "." // the module's root package
		}
		switch last := strings.TrimSpace(cells[2]); last {
		case "any":
			anyImport[pkg] = true
		case "—":
			allowed[pkg] = []string{}
		default:
			for _, b := range backtickRE.FindAllStringSubmatch(last, -1) {
				allowed[pkg] = append(allowed[pkg], b[1])
			}
		}
	}

	for _, pkg := range modulePackages(t) {
		if anyImport[pkg] {
			continue
		}
		ok, listed := allowed[pkg]
		if !listed {
			t.Errorf("package %s has no row in architecture.md's package table", pkg)
			continue
		}
		for _, imp := range trjImports(t, pkg) {
			if !slices.Contains(ok, imp) {
				t.Errorf("%s imports %s, which architecture.md does not allow (allowed: %v)", pkg, imp, ok)
			}
		}
	}
}

// modulePackages lists the module's packages (directories with non-test Go
// files) relative to the root, docs as "docs".
func modulePackages(t *testing.T) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != repoRoot && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		if hasGoFiles(t, path) {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			pkgs = append(pkgs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pkgs)
	return pkgs
}

// trjImports returns the module-internal imports of pkg's non-test files,
// relative to the module path.
func trjImports(t *testing.T, pkg string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(pkg), "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range af.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if rest, ok := strings.CutPrefix(p, modulePath+"/"); ok {
				seen[rest] = true
			} else if p == modulePath {
				seen["trj"] = true
			}
		}
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
