package docs_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the Go and output blocks of the Markdown files from their sources")

// repoRoot is the repository root relative to this package's directory,
// where go test runs.
const repoRoot = ".."

// marker is an HTML comment that names the source of the fenced block
// after it: <!-- KIND ARGS... -->.
var markerRE = regexp.MustCompile(`^<!--\s*(snippet|source|api|output)\s+(.*?)\s*-->\s*$`)

// TestMarkdown checks every fenced Go block of the Markdown files under
// docs/ against its source; with -update it rewrites them (and refreshes the
// output blocks by running the guide's code).
func TestMarkdown(t *testing.T) {
	snippets, err := loadSnippets(".")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, md := range markdownFiles(t) {
		src := readText(t, md)
		out, errs := syncMarkdown(src, snippets, used, *update)
		for _, e := range errs {
			t.Errorf("%s: %v", md, e)
		}
		if *update && out != src {
			if err := os.WriteFile(md, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("updated %s", md)
		}
	}
	for name := range snippets {
		if !used[name] {
			t.Errorf("snippet %q is not used by any Markdown file", name)
		}
	}
}

// markdownFiles lists the .md files under docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The repository's README shares the docs' rule: its Go block is compiled.
	files = append(files, filepath.Join("..", "README.md"))
	sort.Strings(files)
	return files
}

// syncMarkdown checks (or, with update, rewrites) the blocks of one
// Markdown document and returns the document with the expected blocks.
func syncMarkdown(doc string, snippets map[string]string, used map[string]bool, update bool) (string, []error) {
	lines := strings.Split(doc, "\n")
	var out []string
	var errs []error
	var pending []string // marker fields waiting for their block
	pendingLine := 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := markerRE.FindStringSubmatch(line); m != nil {
			if pending != nil {
				errs = append(errs, fmt.Errorf("line %d: marker without a fenced block after it", pendingLine))
			}
			pending, pendingLine = append([]string{m[1]}, strings.Fields(m[2])...), i+1
			out = append(out, line)
			continue
		}
		if !strings.HasPrefix(line, "```") {
			if strings.TrimSpace(line) != "" && pending != nil {
				errs = append(errs, fmt.Errorf("line %d: marker not followed by a fenced block", pendingLine))
				pending = nil
			}
			out = append(out, line)
			continue
		}
		// A fenced block: find its end.
		info := strings.TrimSpace(strings.TrimPrefix(line, "```"))
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			errs = append(errs, fmt.Errorf("line %d: unterminated code block", i+1))
			out = append(out, lines[i:]...)
			break
		}
		body := strings.Join(lines[i+1:end], "\n")
		want, checked, err := expectedBlock(info, pending, snippets, used, update)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("line %d: %w", i+1, err))
		case checked && want != body && !update:
			errs = append(errs, fmt.Errorf("line %d: %s block differs from its source (%s); run go test ./docs -run TestMarkdown -update",
				i+1, strings.Join(pending, " "), firstDifference(body, want)))
		}
		out = append(out, line)
		if err == nil && (checked || pending != nil && pending[0] == "output") && update {
			out = append(out, strings.Split(want, "\n")...)
		} else {
			out = append(out, lines[i+1:end]...)
		}
		out = append(out, lines[end])
		i = end
		pending = nil
	}
	if pending != nil {
		errs = append(errs, fmt.Errorf("line %d: marker without a fenced block after it", pendingLine))
	}
	return strings.Join(out, "\n"), errs
}

// expectedBlock returns the content a block must have. checked is false for
// blocks that are not compared (text, or output blocks outside -update).
func expectedBlock(info string, marker []string, snippets map[string]string, used map[string]bool, update bool) (string, bool, error) {
	lang := ""
	if f := strings.Fields(info); len(f) > 0 {
		lang = f[0]
	}
	if marker == nil {
		if lang == "go" {
			return "", false, errors.New("```go block without a snippet, source or api marker before it")
		}
		return "", false, nil
	}
	kind, args := marker[0], marker[1:]
	if kind == "output" {
		if len(args) != 1 {
			return "", false, errors.New("output marker needs one name")
		}
		if !update {
			return "", false, nil
		}
		s, err := runOutput(args[0])
		return s, false, err
	}
	if lang != "go" {
		return "", false, fmt.Errorf("%s marker before a %q block, want go", kind, lang)
	}
	switch kind {
	case "snippet":
		if len(args) != 1 {
			return "", false, errors.New("snippet marker needs one name")
		}
		s, ok := snippets[args[0]]
		if !ok {
			return "", false, fmt.Errorf("no snippet %q in docs/*_test.go", args[0])
		}
		used[args[0]] = true
		return s, true, nil
	case "source", "api":
		if len(args) < 2 {
			return "", false, fmt.Errorf("%s marker needs a path and symbols", kind)
		}
		s, err := declarations(args[0], args[1:], kind == "api")
		return s, true, err
	}
	return "", false, fmt.Errorf("unknown marker %q", kind)
}

// firstDifference describes the first line where got and want differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("block line %d: have %q, want %q", i+1, gl, wl)
		}
	}
	return "no difference"
}

var snippetRE = regexp.MustCompile(`^\s*// (end)?snippet:([A-Za-z0-9_-]+)\s*$`)

// loadSnippets collects the marked regions of the _test.go files in dir,
// with their common indentation removed.
func loadSnippets(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	snippets := map[string]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var open string
		var body []string
		for n, line := range strings.Split(string(src), "\n") {
			m := snippetRE.FindStringSubmatch(line)
			switch {
			case m == nil:
				if open != "" {
					body = append(body, line)
				}
			case m[1] == "" && open == "":
				open, body = m[2], nil
			case m[1] == "end" && m[2] == open:
				if _, dup := snippets[open]; dup {
					return nil, fmt.Errorf("%s:%d: snippet %q defined twice", f, n+1, open)
				}
				snippets[open] = dedent(body)
				open = ""
			default:
				return nil, fmt.Errorf("%s:%d: unbalanced snippet marker %q", f, n+1, strings.TrimSpace(line))
			}
		}
		if open != "" {
			return nil, fmt.Errorf("%s: snippet %q not closed", f, open)
		}
	}
	return snippets, nil
}

// dedent drops leading and trailing blank lines and the indentation common
// to the other lines.
func dedent(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	var prefix string
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = ind, false
		}
		for !strings.HasPrefix(ind, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimPrefix(l, prefix)
	}
	return strings.Join(out, "\n")
}

// declarations returns the source of the named declarations in path (a
// .go file, or with api a package directory), relative to the repository
// root. Symbols are Name or Type.Method. With api, doc comments and
// function bodies are dropped, giving the signatures of a contract.
func declarations(path string, symbols []string, api bool) (string, error) {
	full := filepath.Join(repoRoot, filepath.FromSlash(path))
	var files []string
	if st, err := os.Stat(full); err != nil {
		return "", err
	} else if st.IsDir() {
		matches, err := filepath.Glob(filepath.Join(full, "*.go"))
		if err != nil {
			return "", err
		}
		for _, m := range matches {
			if !strings.HasSuffix(m, "_test.go") {
				files = append(files, m)
			}
		}
	} else {
		files = []string{full}
	}
	fset := token.NewFileSet()
	type parsed struct {
		src  []byte
		file *ast.File
	}
	var all []parsed
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		af, err := parser.ParseFile(fset, f, src, parser.ParseComments)
		if err != nil {
			return "", err
		}
		all = append(all, parsed{src, af})
	}
	var parts []string
	prevFunc := false
	for _, sym := range symbols {
		found := false
		for _, p := range all {
			text, isFunc, ok, err := findDecl(fset, p.src, p.file, sym, api)
			if err != nil {
				return "", err
			}
			if !ok {
				continue
			}
			found = true
			if api && isFunc && prevFunc {
				parts[len(parts)-1] += "\n" + text
			} else {
				parts = append(parts, text)
			}
			prevFunc = isFunc
			break
		}
		if !found {
			return "", fmt.Errorf("%s: no declaration of %s", path, sym)
		}
	}
	return strings.Join(parts, "\n\n"), nil
}

// findDecl finds sym in one file and returns its text.
func findDecl(fset *token.FileSet, src []byte, f *ast.File, sym string, api bool) (string, bool, bool, error) {
	recv, name, isMethod := strings.Cut(sym, ".")
	if !isMethod {
		name, recv = recv, ""
	}
	text := func(from, to token.Pos) string {
		return string(src[fset.Position(from).Offset:fset.Position(to).Offset])
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name != name || receiverName(d) != recv {
				continue
			}
			if api {
				sig := *d
				sig.Doc, sig.Body = nil, nil
				var buf bytes.Buffer
				if err := format.Node(&buf, token.NewFileSet(), &sig); err != nil {
					return "", false, false, err
				}
				return buf.String(), true, true, nil
			}
			from := d.Pos()
			if d.Doc != nil {
				from = d.Doc.Pos()
			}
			return text(from, d.End()), true, true, nil
		case *ast.GenDecl:
			if recv != "" {
				continue
			}
			for _, s := range d.Specs {
				var id *ast.Ident
				var doc *ast.CommentGroup
				switch s := s.(type) {
				case *ast.TypeSpec:
					id, doc = s.Name, s.Doc
				case *ast.ValueSpec:
					if slices.ContainsFunc(s.Names, func(n *ast.Ident) bool { return n.Name == name }) {
						id, doc = &ast.Ident{Name: name}, s.Doc
					}
				}
				if id == nil || id.Name != name {
					continue
				}
				if !d.Lparen.IsValid() {
					from := d.Pos()
					if d.Doc != nil && !api {
						from = d.Doc.Pos()
					}
					return text(from, d.End()), false, true, nil
				}
				// One spec of a grouped declaration.
				from := s.Pos()
				if doc != nil && !api {
					from = doc.Pos()
				}
				pos := fset.Position(from)
				spec := string(src[pos.Offset-(pos.Column-1) : fset.Position(s.End()).Offset])
				return d.Tok.String() + " " + dedent(strings.Split(spec, "\n")), false, true, nil
			}
		}
	}
	return "", false, false, nil
}

// receiverName is the base type name of a method's receiver, or "".
func receiverName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch t := t.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		if id, ok := t.X.(*ast.Ident); ok {
			return id.Name
		}
	}
	return ""
}

// runOutput produces the text of an output block by running the guide's
// code (only with -update).
func runOutput(name string) (string, error) {
	ctx := context.Background()
	var buf bytes.Buffer
	x, y := guideData()
	switch name {
	case "fit":
		if _, err := fitQuadratic(ctx, &buf, x, y); err != nil {
			return "", err
		}
	case "compare":
		if _, err := compareModels(ctx, &buf, x, y); err != nil {
			return "", err
		}
	case "varselect":
		if _, err := whichPredictors(ctx, &buf, nil); err != nil {
			return "", err
		}
	case "select":
		sx, sy := selectionData()
		if _, _, err := selectPredictors(ctx, &buf, io.Discard, sx, sy); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("unknown output %q", name)
	}
	return strings.TrimRight(buf.String(), "\n"), nil
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinks checks that relative links in the Markdown files resolve.
func TestLinks(t *testing.T) {
	for _, md := range markdownFiles(t) {
		src := readText(t, md)
		inFence := false
		for n, line := range strings.Split(src, "\n") {
			if strings.HasPrefix(line, "```") {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				if _, err := os.Stat(filepath.Join(filepath.Dir(md), filepath.FromSlash(target))); err != nil {
					t.Errorf("%s:%d: broken link %s", md, n+1, m[1])
				}
			}
		}
	}
}

// readText returns the file at path as a string, ending the test when it
// cannot be read.
func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
