package docs_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestProseIdentifiers checks the Go names the Markdown prose quotes in
// backticks against the module's exported API: in `pkg.Name`, `Type.Member`
// and longer chains (`trj.Settings.Chains.Steps`) every capitalised name
// after a package of the module or a type of the module must exist: a
// declaration of the package, a method or field of the type (promoted ones
// included), followed through the field's type. Names of variables
// (`res.Bridge`), of other modules' packages (`mat.Dense`) and file names
// are left alone: without type checking they cannot be resolved.
func TestProseIdentifiers(t *testing.T) {
	api, err := loadAPI(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range markdownFiles(t) {
		src := readText(t, md)
		for _, e := range api.checkProse(src) {
			t.Errorf("%s:%s", md, e)
		}
	}
}

// TestProseIdentifiersChecker checks the checker on small documents.
func TestProseIdentifiersChecker(t *testing.T) {
	api, err := loadAPI(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		doc  string
		want string // in the first error; "" for none
	}{
		{"Save with `Fitted.Save`.", ""},
		{"Save with `Result.SaveTransports`.", "Result has no field or method SaveTransports"},
		{"Save with `Result.Transports.Save`.", "Transports has no field or method Save"},
		{"Call `trj.Run(ctx, space, s)`.", ""},
		{"Call `trj.RunAll`.", "package trj has no exported RunAll"},
		{"Set `trj.Settings.Chains.Steps`.", ""},
		{"Set `trj.Settings.Chains.Step`.", "Chains has no field or method Step (looked in trj.ChainSettings)"},
		{"The merged `sas.Result.WriteTable` is promoted.", ""},
		{"Variables are not checked: `res.Nope`, nor other modules: `mat.Nope`, nor files: `draws_1.csv`.", ""},
		{"Code blocks are not prose:\n```go\nx := trj.Nope\n```\n", ""},
		{"A `kernels.TRJ.Step` method.", ""},
		{"A `kernels.TRJ.Jump` method.", "TRJ has no field or method Jump (looked in kernels.TRJ)"},
	}
	for _, c := range cases {
		errs := api.checkProse(c.doc)
		switch {
		case c.want == "" && len(errs) > 0:
			t.Errorf("%q: %v", c.doc, errs)
		case c.want != "" && (len(errs) == 0 || !strings.Contains(errs[0], c.want)):
			t.Errorf("%q: errors %v, want one with %q", c.doc, errs, c.want)
		}
	}
}

// typeRef names a type of the module: the directory of its package and
// its name. noMembers stands for a type with no fields or methods (a
// slice, a map, a basic type).
type typeRef struct{ dir, name string }

var noMembers = &typeRef{name: "(no members)"}

// basicTypes are the predeclared types, which have no members.
var basicTypes = map[string]bool{
	"bool": true, "string": true, "int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uintptr": true,
	"float32": true, "float64": true, "complex64": true, "complex128": true, "byte": true, "rune": true,
}

// typeInfo is what a type of the module offers to a selector.
type typeInfo struct {
	members  map[string]*typeRef // field or method → the field's type when known
	embedded []typeRef
	alias    *typeRef
}

// moduleAPI is the exported API of the module's packages, parsed without
// type checking.
type moduleAPI struct {
	pkgs   map[string][]string        // package name → directories
	decls  map[string]map[string]bool // directory → top-level names
	types  map[typeRef]*typeInfo      // every named type
	byName map[string][]typeRef       // type name → its types in any package
}

// loadAPI parses the non-test Go files of every package under root.
func loadAPI(root string) (*moduleAPI, error) {
	api := &moduleAPI{pkgs: map[string][]string{}, decls: map[string]map[string]bool{}, types: map[typeRef]*typeInfo{}, byName: map[string][]typeRef{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dir = filepath.ToSlash(dir)
		if f.Name.Name == "main" {
			return nil
		}
		api.addFile(dir, f)
		return nil
	})
	return api, err
}

func (api *moduleAPI) addFile(dir string, f *ast.File) {
	if !slices.Contains(api.pkgs[f.Name.Name], dir) {
		api.pkgs[f.Name.Name] = append(api.pkgs[f.Name.Name], dir)
	}
	if api.decls[dir] == nil {
		api.decls[dir] = map[string]bool{}
	}
	imports := map[string]string{} // local name → module directory
	for _, im := range f.Imports {
		p := strings.Trim(im.Path.Value, `"`)
		rel, ok := strings.CutPrefix(p, modulePath)
		if !ok {
			continue
		}
		rel = strings.TrimPrefix(rel, "/")
		if rel == "" {
			rel = "."
		}
		name := filepath.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = rel
	}
	ref := func(e ast.Expr) *typeRef {
		for {
			switch x := e.(type) {
			case *ast.StarExpr:
				e = x.X
				continue
			case *ast.Ident:
				if basicTypes[x.Name] {
					return noMembers
				}
				return &typeRef{dir, x.Name}
			case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType:
				return noMembers
			case *ast.SelectorExpr:
				if p, ok := x.X.(*ast.Ident); ok && imports[p.Name] != "" {
					return &typeRef{imports[p.Name], x.Sel.Name}
				}
			case *ast.IndexExpr:
				e = x.X
				continue
			}
			return nil
		}
	}
	info := func(name string) *typeInfo {
		r := typeRef{dir, name}
		if api.types[r] == nil {
			api.types[r] = &typeInfo{members: map[string]*typeRef{}}
			api.byName[name] = append(api.byName[name], r)
		}
		return api.types[r]
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				api.decls[dir][d.Name.Name] = true
				continue
			}
			if r := ref(d.Recv.List[0].Type); r != nil {
				info(r.name).members[d.Name.Name] = nil
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						api.decls[dir][n.Name] = true
					}
				case *ast.TypeSpec:
					api.decls[dir][s.Name.Name] = true
					ti := info(s.Name.Name)
					if s.Assign.IsValid() {
						ti.alias = ref(s.Type)
					}
					switch st := s.Type.(type) {
					case *ast.StructType:
						for _, fl := range st.Fields.List {
							if len(fl.Names) == 0 {
								if r := ref(fl.Type); r != nil && r != noMembers {
									ti.embedded = append(ti.embedded, *r)
									ti.members[r.name] = r
								}
								continue
							}
							for _, n := range fl.Names {
								ti.members[n.Name] = ref(fl.Type)
							}
						}
					case *ast.InterfaceType:
						for _, m := range st.Methods.List {
							for _, n := range m.Names {
								ti.members[n.Name] = nil
							}
							if len(m.Names) == 0 {
								if r := ref(m.Type); r != nil {
									ti.embedded = append(ti.embedded, *r)
								}
							}
						}
					}
				}
			}
		}
	}
}

// member looks name up in the type r, its alias target and its embedded
// types: found, and the field's type when known.
func (api *moduleAPI) member(r typeRef, name string, depth int) (bool, *typeRef) {
	ti := api.types[r]
	if ti == nil || depth > 8 {
		return false, nil
	}
	if m, ok := ti.members[name]; ok {
		return true, m
	}
	if ti.alias != nil {
		if ok, m := api.member(*ti.alias, name, depth+1); ok {
			return true, m
		}
	}
	for _, e := range ti.embedded {
		if ok, m := api.member(e, name, depth+1); ok {
			return true, m
		}
	}
	return false, nil
}

var (
	codeSpanRE = regexp.MustCompile("`[^`\n]+`")
	chainRE    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+`)
)

// checkProse returns an error, "LINE: message", for each unresolvable
// name quoted in backticks outside the fenced blocks of doc.
func (api *moduleAPI) checkProse(doc string) []string {
	var errs []string
	fenced := false
	for i, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, span := range codeSpanRE.FindAllString(line, -1) {
			for _, loc := range chainRE.FindAllStringIndex(span, -1) {
				// Skip a chain continuing a longer name (x.y.z inside
				// a.x.y.z is found whole) or a file name's extension.
				if end := loc[1]; end < len(span) && span[end] == '.' {
					continue
				}
				if msg := api.checkChain(span[loc[0]:loc[1]]); msg != "" {
					errs = append(errs, fmt.Sprintf("%d: %s: %s", i+1, span, msg))
				}
			}
		}
	}
	return errs
}

// checkChain checks one dotted name; "" when it resolves or cannot be
// checked.
func (api *moduleAPI) checkChain(chain string) string {
	parts := strings.Split(chain, ".")
	var cands []typeRef
	rest := parts[1:]
	switch dirs := api.pkgs[parts[0]]; {
	case len(dirs) > 0:
		name := parts[1]
		if !ast.IsExported(name) {
			return ""
		}
		for _, d := range dirs {
			if api.decls[d][name] {
				if api.types[typeRef{d, name}] != nil {
					cands = append(cands, typeRef{d, name})
				}
			}
		}
		found := false
		for _, d := range dirs {
			found = found || api.decls[d][name]
		}
		if !found {
			return fmt.Sprintf("package %s has no exported %s", parts[0], name)
		}
		rest = parts[2:]
	case ast.IsExported(parts[0]) && len(api.byName[parts[0]]) > 0:
		cands = api.byName[parts[0]]
	default:
		return "" // a variable, another module's package or a file name
	}
	prev := parts[len(parts)-len(rest)-1]
	for _, name := range rest {
		if len(cands) == 0 || !ast.IsExported(name) {
			return ""
		}
		var next []typeRef
		found, unknown := false, false
		for _, c := range cands {
			if c == *noMembers {
				continue
			}
			ok, m := api.member(c, name, 0)
			switch {
			case !ok:
			case m == noMembers || (m != nil && api.types[*m] != nil):
				found = true
				next = append(next, *m)
			default:
				found, unknown = true, true
			}
		}
		if !found {
			names := make([]string, 0, len(cands))
			for _, c := range cands {
				names = append(names, typeLabel(c))
			}
			sort.Strings(names)
			return fmt.Sprintf("%s has no field or method %s (looked in %s)", prev, name, strings.Join(slices.Compact(names), ", "))
		}
		if unknown {
			return "" // some candidate's field is of a type this cannot follow
		}
		cands, prev = next, name
	}
	return ""
}

// typeLabel names a type as godoc does: trj.Result, models/sas.Result.
func typeLabel(r typeRef) string {
	if r.dir == "." {
		return "trj." + r.name
	}
	return r.dir + "." + r.name
}

const modulePath = "github.com/trjgo/trj"

var tableRowRE = regexp.MustCompile("^\\| \\[`([^`]+)`\\]")
var backtickRE = regexp.MustCompile("`([^`]+)`")

// TestImportRules checks the "may import" column of architecture.md's
// package table against the imports of the packages' non-test files, and
// that every package of the module has a row.
func TestImportRules(t *testing.T) {
	src := readText(t, "architecture.md")
	allowed := map[string][]string{} // package → allowed trj imports; nil entry for "any"
	anyImport := map[string]bool{}
	for _, line := range strings.Split(src, "\n") {
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
