package docs_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// This file checks the Kubernetes manifests of scale.md without a
// cluster: each ```yaml block is parsed (a small YAML subset: block
// mappings and sequences, flow sequences and mappings, quoted and plain
// scalars, comments; anything else is an error) and checked against the
// part of the batch/v1 Job schema that the page uses: field names, types,
// allowed values, required fields; then against what an Indexed Job of trj
// shards needs.

// kind is a schema node's type.
type kind int

const (
	kString kind = iota
	kInt
	kBool
	kQuantity // a string or an integer (resource.Quantity)
	kObject
	kArray
	kMap // string keys, values of elem
)

// schema is a node of the Job schema.
type schema struct {
	kind     kind
	fields   map[string]*schema // kObject
	elem     *schema            // kArray, kMap
	enum     []string           // allowed values of a string
	required []string           // kObject
}

func obj(required []string, fields map[string]*schema) *schema {
	return &schema{kind: kObject, fields: fields, required: required}
}

var (
	str     = &schema{kind: kString}
	integer = &schema{kind: kInt}
	boolean = &schema{kind: kBool}
)

func enum(values ...string) *schema { return &schema{kind: kString, enum: values} }
func array(elem *schema) *schema    { return &schema{kind: kArray, elem: elem} }
func dict(elem *schema) *schema     { return &schema{kind: kMap, elem: elem} }

// jobSchema is the part of batch/v1 Job (Kubernetes 1.29+) that the
// manifests of scale.md use, with the field types and values of the API
// reference.
var jobSchema = func() *schema {
	meta := obj([]string{"name"}, map[string]*schema{"name": str, "namespace": str, "labels": dict(str), "annotations": dict(str)})
	envVar := obj([]string{"name"}, map[string]*schema{
		"name": str, "value": str,
		"valueFrom": obj(nil, map[string]*schema{
			"resourceFieldRef": obj([]string{"resource"}, map[string]*schema{
				"resource":      enum("limits.cpu", "limits.memory", "requests.cpu", "requests.memory"),
				"containerName": str, "divisor": {kind: kQuantity},
			}),
			"fieldRef": obj([]string{"fieldPath"}, map[string]*schema{"fieldPath": str, "apiVersion": str}),
		}),
	})
	resources := obj(nil, map[string]*schema{"requests": dict(&schema{kind: kQuantity}), "limits": dict(&schema{kind: kQuantity})})
	container := obj([]string{"name", "image"}, map[string]*schema{
		"name": str, "image": str, "imagePullPolicy": enum("Always", "IfNotPresent", "Never"),
		"command": array(str), "args": array(str), "workingDir": str, "env": array(envVar),
		"resources": resources,
		"volumeMounts": array(obj([]string{"name", "mountPath"}, map[string]*schema{
			"name": str, "mountPath": str, "subPath": str, "readOnly": boolean,
		})),
	})
	volume := obj([]string{"name"}, map[string]*schema{
		"name":                  str,
		"persistentVolumeClaim": obj([]string{"claimName"}, map[string]*schema{"claimName": str, "readOnly": boolean}),
		"emptyDir":              obj(nil, map[string]*schema{"medium": str, "sizeLimit": {kind: kQuantity}}),
	})
	pod := obj([]string{"containers"}, map[string]*schema{
		// A Job's pods may not restart Always.
		"restartPolicy": enum("Never", "OnFailure"),
		"containers":    array(container), "volumes": array(volume),
		"serviceAccountName": str, "nodeSelector": dict(str),
	})
	spec := obj([]string{"template"}, map[string]*schema{
		"completionMode": enum("NonIndexed", "Indexed"),
		"completions":    integer, "parallelism": integer, "backoffLimit": integer,
		"backoffLimitPerIndex": integer, "maxFailedIndexes": integer,
		"activeDeadlineSeconds": integer, "ttlSecondsAfterFinished": integer,
		"template": obj([]string{"spec"}, map[string]*schema{"metadata": meta, "spec": pod}),
	})
	return obj([]string{"apiVersion", "kind", "metadata", "spec"}, map[string]*schema{
		"apiVersion": enum("batch/v1"), "kind": enum("Job"), "metadata": meta, "spec": spec,
	})
}()

var (
	quantity = regexp.MustCompile(`^[0-9.]+(m|k|Ki|Mi|Gi|Ti|M|G|T)?$`)
	yamlInt  = regexp.MustCompile(`^-?[0-9]+$`)
)

// check checks v against s, appending an error per mismatch.
func (s *schema) check(path string, v any, errs *[]string) {
	bad := func(format string, a ...any) { *errs = append(*errs, path+": "+fmt.Sprintf(format, a...)) }
	switch s.kind {
	case kString:
		x, ok := v.(string)
		if !ok {
			bad("want a string, got %v (%T)", v, v)
		} else if s.enum != nil && !slices.Contains(s.enum, x) {
			bad("%q is not one of %v", x, s.enum)
		}
	case kInt:
		if x, ok := v.(int); !ok || x < 0 {
			bad("want a non-negative integer, got %v (%T)", v, v)
		}
	case kBool:
		if _, ok := v.(bool); !ok {
			bad("want true or false, got %v", v)
		}
	case kQuantity:
		x, isStr := v.(string)
		_, isInt := v.(int)
		if !isInt && !(isStr && quantity.MatchString(x)) {
			bad("%v is not a quantity", v)
		}
	case kArray:
		x, ok := v.([]any)
		if !ok {
			bad("want a list, got %T", v)
			return
		}
		for i, e := range x {
			s.elem.check(fmt.Sprintf("%s[%d]", path, i), e, errs)
		}
	case kMap, kObject:
		x, ok := v.(map[string]any)
		if !ok {
			bad("want a mapping, got %T", v)
			return
		}
		for k, e := range x {
			if s.kind == kMap {
				s.elem.check(path+"."+k, e, errs)
				continue
			}
			f := s.fields[k]
			if f == nil {
				bad("unknown field %q", k)
				continue
			}
			f.check(path+"."+k, e, errs)
		}
		for _, r := range s.required {
			if _, ok := x[r]; !ok && s.kind == kObject {
				bad("missing required field %q", r)
			}
		}
	}
}

// get returns the value at a dotted path of mappings (nil when absent).
func get(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// checkJob checks a parsed manifest: the schema, then what trj's shards
// need of an Indexed Job.
func checkJob(v any) []string {
	var errs []string
	jobSchema.check("Job", v, &errs)
	if errs != nil {
		return errs
	}
	spec := get(v, "spec")
	indexed := get(spec, "completionMode") == "Indexed"
	completions, _ := get(spec, "completions").(int)
	parallelism, hasPar := get(spec, "parallelism").(int)
	switch {
	case indexed && completions < 1:
		errs = append(errs, "an Indexed Job needs completions")
	case hasPar && parallelism > max(completions, 1):
		errs = append(errs, fmt.Sprintf("parallelism %d exceeds completions %d", parallelism, completions))
	case !indexed && get(spec, "backoffLimitPerIndex") != nil:
		errs = append(errs, "backoffLimitPerIndex needs completionMode Indexed")
	case get(spec, "template.spec.restartPolicy") == nil:
		errs = append(errs, "a Job's pods need restartPolicy Never or OnFailure")
	}
	pod := get(spec, "template.spec")
	volumes := map[string]bool{}
	vs, _ := get(pod, "volumes").([]any)
	for _, vol := range vs {
		volumes[get(vol, "name").(string)] = true
	}
	cs, _ := get(pod, "containers").([]any)
	for i, c := range cs {
		var cmd []string
		for _, key := range []string{"command", "args"} {
			a, _ := get(c, key).([]any)
			for _, s := range a {
				cmd = append(cmd, s.(string))
			}
		}
		shard := ""
		for j, a := range cmd {
			if a == "-shard" && j+1 < len(cmd) {
				shard = cmd[j+1]
			}
		}
		switch {
		case indexed && shard != strconv.Itoa(completions):
			errs = append(errs, fmt.Sprintf("container %d: an Indexed Job of %d completions runs trj with -shard %q, want -shard %d (the index from JOB_COMPLETION_INDEX)", i, completions, shard, completions))
		case !indexed && shard != "" && !strings.Contains(shard, "/"):
			errs = append(errs, fmt.Sprintf("container %d: -shard %s without an Indexed Job: no JOB_COMPLETION_INDEX to say which shard", i, shard))
		}
		env, _ := get(c, "env").([]any)
		for _, e := range env {
			if get(e, "name") == "JOB_COMPLETION_INDEX" {
				errs = append(errs, fmt.Sprintf("container %d sets JOB_COMPLETION_INDEX, which Kubernetes sets per pod", i))
			}
		}
		mounts, _ := get(c, "volumeMounts").([]any)
		for _, m := range mounts {
			if name := get(m, "name").(string); !volumes[name] {
				errs = append(errs, fmt.Sprintf("container %d mounts volume %q, which the pod does not have", i, name))
			}
		}
	}
	return errs
}

// yamlBlocks returns the ```yaml blocks of a page by the file name of
// their first line ("# NAME.yaml").
func yamlBlocks(t *testing.T, doc string) map[string]string {
	t.Helper()
	blocks := map[string]string{}
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```yaml" {
			continue
		}
		j := i + 1
		for j < len(lines) && lines[j] != "```" {
			j++
		}
		body := lines[i+1 : j]
		name := ""
		if len(body) > 0 {
			name, _ = strings.CutPrefix(body[0], "# ")
		}
		if !strings.HasSuffix(name, ".yaml") {
			t.Errorf("scale.md: a yaml block (line %d) does not start with its file name (# NAME.yaml)", i+1)
		}
		blocks[name] = strings.Join(body, "\n")
		i = j
	}
	return blocks
}

// TestScaleManifests checks the Kubernetes Jobs of scale.md against the
// batch/v1 Job schema and the staged SAS Jobs against each other.
func TestScaleManifests(t *testing.T) {
	src := readText(t, "scale.md")
	blocks := yamlBlocks(t, src)
	for _, want := range []string{"factor-study-job.yaml", "factor-merge-job.yaml", "sas-pilot-job.yaml", "sas-fit-job.yaml", "sas-chains-job.yaml", "sas-merge-job.yaml"} {
		if _, ok := blocks[want]; !ok {
			t.Errorf("scale.md has no manifest %s", want)
		}
	}
	jobs := map[string]any{}
	for name, body := range blocks {
		v, err := parseYAML(body)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, e := range checkJob(v) {
			t.Errorf("%s: %s", name, e)
		}
		jobs[name] = v
	}
	// The staged SAS Jobs: the stage each runs and its shards.
	for name, want := range map[string][]string{
		"sas-pilot-job.yaml":  {"pilot", "2"},
		"sas-fit-job.yaml":    {"fit", ""},
		"sas-chains-job.yaml": {"chains", "3"},
	} {
		c := get(jobs[name], "spec.template.spec.containers")
		cs, _ := c.([]any)
		if len(cs) != 1 {
			t.Errorf("%s: want one container", name)
			continue
		}
		cmd := fmt.Sprint(get(cs[0], "command"))
		if !strings.Contains(cmd, "-stage "+want[0]) {
			t.Errorf("%s runs %s, not the %s stage", name, cmd, want[0])
		}
		if n := fmt.Sprint(get(jobs[name], "spec.completions")); want[1] != "" && n != want[1] {
			t.Errorf("%s: %s completions, want %s", name, n, want[1])
		}
	}
	if m := fmt.Sprint(get(jobs["sas-merge-job.yaml"], "spec.template.spec.containers")); !strings.Contains(m, "shard_*_of_3.json") {
		t.Errorf("sas-merge-job.yaml does not merge the 3 chain shards: %s", m)
	}
}

// TestManifestChecker checks the checker on broken manifests.
func TestManifestChecker(t *testing.T) {
	good := `apiVersion: batch/v1
kind: Job
metadata:
  name: x
spec:
  completionMode: Indexed
  completions: 4
  parallelism: 4
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: i
          command: ["trj", "sample", "-shard", "4"]
          volumeMounts:
            - {name: v, mountPath: /v}
      volumes:
        - name: v
          emptyDir: {}`
	v, err := parseYAML(good)
	if err != nil {
		t.Fatal(err)
	}
	if errs := checkJob(v); errs != nil {
		t.Fatalf("a good manifest: %v", errs)
	}
	for _, c := range []struct{ from, to, want string }{
		{"completionMode: Indexed", "completionMode: indexed", `"indexed" is not one of`},
		{"completions: 4", "completions: four", "want a non-negative integer"},
		{"completions: 4", "completion: 4", `unknown field "completion"`},
		{`"-shard", "4"`, `"-shard", "3"`, "want -shard 4"},
		{"restartPolicy: Never", "restartPolicy: Always", `"Always" is not one of`},
		{"apiVersion: batch/v1", "apiVersion: v1", `"v1" is not one of`},
		{"          image: i\n", "", `missing required field "image"`},
		{"{name: v, mountPath: /v}", "{name: w, mountPath: /v}", `mounts volume "w"`},
		{"  parallelism: 4", "  parallelism: 5", "parallelism 5 exceeds completions 4"},
		{"          command:", "          env: [{name: JOB_COMPLETION_INDEX, value: \"1\"}]\n          command:", "sets JOB_COMPLETION_INDEX"},
	} {
		bad := strings.Replace(good, c.from, c.to, 1)
		if bad == good {
			t.Fatalf("%q is not in the manifest", c.from)
		}
		v, err := parseYAML(bad)
		if err != nil {
			t.Errorf("%q → %q: %v", c.from, c.to, err)
			continue
		}
		errs := strings.Join(checkJob(v), "; ")
		if !strings.Contains(errs, c.want) {
			t.Errorf("%q → %q: errors %q, want %q", c.from, c.to, errs, c.want)
		}
	}
	for _, bad := range []string{"a: 1\na: 2", "a:\n  - x\n   - y", "a: [1, 2", "a: &anchor x", "a: |\n  text", "- a\nb: c"} {
		if _, err := parseYAML(bad); err == nil {
			t.Errorf("parseYAML(%q): no error", bad)
		}
	}
}

// yline is a line of YAML without its comment: its indentation and text.
type yline struct {
	indent int
	text   string
	n      int // 1-based line number
}

// parseYAML parses the YAML subset of the page's manifests.
func parseYAML(src string) (any, error) {
	var lines []yline
	for i, l := range strings.Split(src, "\n") {
		text := stripComment(l)
		if strings.TrimSpace(text) == "" {
			continue
		}
		if strings.Contains(text, "\t") {
			return nil, fmt.Errorf("line %d: a tab", i+1)
		}
		trimmed := strings.TrimLeft(text, " ")
		lines = append(lines, yline{indent: len(text) - len(trimmed), text: strings.TrimRight(trimmed, " "), n: i + 1})
	}
	if len(lines) == 0 {
		return nil, nil
	}
	p := &yparser{lines: lines}
	v, err := p.block(lines[0].indent)
	if err == nil && p.i < len(lines) {
		err = fmt.Errorf("line %d: unexpected %q", lines[p.i].n, lines[p.i].text)
	}
	return v, err
}

// stripComment drops a comment: # at the start or after a space, outside
// quotes.
func stripComment(l string) string {
	inQuote := byte(0)
	for i := 0; i < len(l); i++ {
		switch c := l[i]; {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '"' || c == '\'':
			inQuote = c
		case c == '#' && (i == 0 || l[i-1] == ' '):
			return l[:i]
		}
	}
	return l
}

type yparser struct {
	lines []yline
	i     int
}

// block parses the mapping or sequence whose lines start at indent.
func (p *yparser) block(indent int) (any, error) {
	if isItem(p.lines[p.i].text) {
		return p.seq(indent)
	}
	return p.mapping(indent)
}

func isItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// splitKey splits "key: value" or "key:"; ok is false for a line that is
// not a mapping entry.
func splitKey(text string) (key, rest string, ok bool) {
	if k, r, found := strings.Cut(text, ": "); found && !strings.ContainsAny(k, "\"'{[") {
		return k, strings.TrimSpace(r), true
	}
	if k, found := strings.CutSuffix(text, ":"); found && !strings.ContainsAny(k, " \"'{[") {
		return k, "", true
	}
	return "", "", false
}

func (p *yparser) mapping(indent int) (any, error) {
	m := map[string]any{}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent {
			break
		}
		if l.indent > indent || isItem(l.text) {
			return nil, fmt.Errorf("line %d: bad indentation of %q", l.n, l.text)
		}
		key, rest, ok := splitKey(l.text)
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not a mapping entry", l.n, l.text)
		}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("line %d: key %q repeated", l.n, key)
		}
		p.i++
		var v any
		var err error
		switch {
		case rest != "":
			v, err = scalarOrFlow(rest, l.n)
		case p.i < len(p.lines) && p.lines[p.i].indent > indent:
			v, err = p.block(p.lines[p.i].indent)
		case p.i < len(p.lines) && p.lines[p.i].indent == indent && isItem(p.lines[p.i].text):
			v, err = p.seq(indent) // a sequence may sit at its key's indentation
		}
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
	return m, nil
}

func (p *yparser) seq(indent int) (any, error) {
	var s []any
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent || (l.indent == indent && !isItem(l.text)) {
			break
		}
		if l.indent > indent || !isItem(l.text) {
			return nil, fmt.Errorf("line %d: bad indentation of %q", l.n, l.text)
		}
		content := strings.TrimSpace(strings.TrimPrefix(l.text, "-"))
		var v any
		var err error
		switch _, _, isMap := splitKey(content); {
		case content == "":
			p.i++
			if p.i < len(p.lines) && p.lines[p.i].indent > indent {
				v, err = p.block(p.lines[p.i].indent)
			}
		case isMap:
			// "- key: value": a mapping whose first entry is on the dash's
			// line, its others indented to that entry.
			at := l.indent + (len(l.text) - len(content))
			p.lines[p.i] = yline{indent: at, text: content, n: l.n}
			v, err = p.mapping(at)
		default:
			p.i++
			v, err = scalarOrFlow(content, l.n)
		}
		if err != nil {
			return nil, err
		}
		s = append(s, v)
	}
	return s, nil
}

// scalarOrFlow parses a value on one line: a flow sequence or mapping or
// a scalar.
func scalarOrFlow(text string, n int) (any, error) {
	f := &flow{s: text, n: n}
	v, err := f.value()
	if err == nil {
		f.space()
		if f.i != len(f.s) {
			err = fmt.Errorf("line %d: trailing %q", n, f.s[f.i:])
		}
	}
	return v, err
}

// flow parses flow-style values.
type flow struct {
	s string
	i int
	n int
}

func (f *flow) space() {
	for f.i < len(f.s) && f.s[f.i] == ' ' {
		f.i++
	}
}

func (f *flow) errorf(format string, a ...any) error {
	return fmt.Errorf("line %d: "+format, append([]any{f.n}, a...)...)
}

func (f *flow) value() (any, error) {
	f.space()
	if f.i == len(f.s) {
		return nil, f.errorf("missing value")
	}
	switch c := f.s[f.i]; c {
	case '[', '{':
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		f.i++
		var list []any
		m := map[string]any{}
		for {
			f.space()
			if f.i < len(f.s) && f.s[f.i] == closer {
				f.i++
				break
			}
			if c == '{' {
				j := strings.IndexByte(f.s[f.i:], ':')
				if j < 0 {
					return nil, f.errorf("a flow mapping entry without ':'")
				}
				key := strings.TrimSpace(f.s[f.i : f.i+j])
				f.i += j + 1
				v, err := f.value()
				if err != nil {
					return nil, err
				}
				if _, dup := m[key]; dup {
					return nil, f.errorf("key %q repeated", key)
				}
				m[key] = v
			} else {
				v, err := f.value()
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			f.space()
			if f.i < len(f.s) && f.s[f.i] == ',' {
				f.i++
				continue
			}
			if f.i < len(f.s) && f.s[f.i] == closer {
				f.i++
				break
			}
			return nil, f.errorf("unclosed %c", c)
		}
		if c == '{' {
			return m, nil
		}
		return list, nil
	case '"', '\'':
		j := strings.IndexByte(f.s[f.i+1:], c)
		if j < 0 {
			return nil, f.errorf("unclosed quote")
		}
		v := f.s[f.i+1 : f.i+1+j]
		if strings.Contains(v, `\`) {
			return nil, f.errorf("escapes are outside the subset")
		}
		f.i += j + 2
		return v, nil
	case '&', '*', '|', '>', '!', '%', '@', '`':
		return nil, f.errorf("%q starts a YAML feature outside the subset", c)
	}
	j := f.i
	for j < len(f.s) && !strings.ContainsRune(",]}", rune(f.s[j])) {
		j++
	}
	word := strings.TrimSpace(f.s[f.i:j])
	f.i = j
	switch {
	case word == "true" || word == "false":
		return word == "true", nil
	case yamlInt.MatchString(word):
		return strconv.Atoi(word)
	}
	return word, nil
}
