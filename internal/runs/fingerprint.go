package runs

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// HashRules tell a Hasher what a workflow's settings hold beyond plain
// values. The zero value hashes every field.
type HashRules struct {
	// Skip reports whether field name of struct type t is left out: what
	// cannot change the computation (output folders, shards, progress
	// hooks).
	Skip func(t reflect.Type, name string) bool
	// Special hashes v itself (by its bytes, say) and reports true when it
	// did; nil or false hashes v by reflection.
	Special func(w *Hasher, path string, v reflect.Value, depth int) bool
	// Funcs names the functions of the workflow a setting may hold, hashed
	// by name (by pointer, reflect.Value.Pointer).
	Funcs map[uintptr]string
}

// Hasher writes values into a fingerprint by reflection: every field is
// hashed by value, recursively through pointers, slices, maps, structs
// and interfaces (by dynamic type and value). Functions and channels
// cannot be hashed: their presence alone is, and Unnamed lists their
// paths, for the workflow to ask for a name (a Tag).
type Hasher struct {
	h       hash.Hash
	rules   *HashRules
	seen    map[uintptr]bool // pointers on the current path (cycles)
	unnamed []string
	buf     [8]byte
}

// NewHasher returns a Hasher that starts with the line header (the
// workflow and version of its fingerprints).
func NewHasher(header string, rules *HashRules) *Hasher {
	if rules == nil {
		rules = &HashRules{}
	}
	w := &Hasher{h: sha256.New(), rules: rules, seen: map[uintptr]bool{}}
	fmt.Fprintln(w.h, header)
	return w
}

// Write writes p into the fingerprint as it is (lines of text describing
// the models).
func (w *Hasher) Write(p []byte) (int, error) { return w.h.Write(p) }

// Sum returns the fingerprint: the hex of the first 16 bytes of the
// SHA-256 of everything written.
func (w *Hasher) Sum() string { return hex.EncodeToString(w.h.Sum(nil)[:16]) }

// Unnamed lists the paths of the functions and channels met, which the
// fingerprint knows only as present.
func (w *Hasher) Unnamed() []string { return w.unnamed }

// Str writes s, prefixed by its length.
func (w *Hasher) Str(s string) {
	w.u64(uint64(len(s)))
	io.WriteString(w.h, s)
}

func (w *Hasher) u64(u uint64) {
	binary.LittleEndian.PutUint64(w.buf[:], u)
	w.h.Write(w.buf[:])
}

// Value hashes v, found at path (how Unnamed names it), depth levels
// below the root.
func (w *Hasher) Value(path string, v reflect.Value, depth int) {
	if depth > 100 {
		w.Str("deep")
		return
	}
	if w.rules.Special != nil && w.rules.Special(w, path, v, depth) {
		return
	}
	w.u64(uint64(v.Kind()))
	switch v.Kind() {
	case reflect.Invalid:
	case reflect.Bool:
		if v.Bool() {
			w.u64(1)
		} else {
			w.u64(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.u64(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		w.u64(v.Uint())
	case reflect.Float32, reflect.Float64:
		w.u64(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		w.u64(math.Float64bits(real(c)))
		w.u64(math.Float64bits(imag(c)))
	case reflect.String:
		w.Str(v.String())
	case reflect.Slice, reflect.Array:
		w.list(path, v, depth)
	case reflect.Map:
		w.mapValue(path, v, depth)
	case reflect.Pointer:
		if v.IsNil() {
			w.u64(0)
			return
		}
		p := v.Pointer()
		if w.seen[p] {
			w.Str("cycle")
			return
		}
		w.seen[p] = true
		w.u64(1)
		w.Value(path, v.Elem(), depth+1)
		delete(w.seen, p)
	case reflect.Interface:
		if v.IsNil() {
			w.u64(0)
			return
		}
		e := v.Elem()
		w.Str(e.Type().PkgPath() + " " + e.Type().String())
		w.Value(path, e, depth+1)
	case reflect.Struct:
		t := v.Type()
		w.Str(t.PkgPath() + " " + t.String())
		for i := range t.NumField() {
			f := t.Field(i)
			if w.skip(t, f.Name) {
				continue
			}
			w.Str(f.Name)
			w.Value(path+"."+f.Name, v.Field(i), depth+1)
		}
	case reflect.Func:
		if v.IsNil() {
			w.u64(0)
			return
		}
		if name, ok := w.rules.Funcs[v.Pointer()]; ok {
			w.Str(name)
			return
		}
		w.u64(1)
		w.unnamed = append(w.unnamed, path)
	default: // channels, unsafe pointers
		if !v.IsNil() {
			w.unnamed = append(w.unnamed, path)
		}
	}
}

func (w *Hasher) skip(t reflect.Type, name string) bool {
	return w.rules.Skip != nil && w.rules.Skip(t, name)
}

// list hashes a slice or array.
func (w *Hasher) list(path string, v reflect.Value, depth int) {
	if v.Kind() == reflect.Slice && v.IsNil() {
		w.u64(math.MaxUint64)
		return
	}
	w.u64(uint64(v.Len()))
	if v.Type().Elem().Kind() == reflect.Float64 {
		for i := range v.Len() {
			w.u64(math.Float64bits(v.Index(i).Float()))
		}
		return
	}
	for i := range v.Len() {
		w.Value(path+"["+strconv.Itoa(i)+"]", v.Index(i), depth+1)
	}
}

// mapValue hashes a map's entries in the order of their keys' hashes.
func (w *Hasher) mapValue(path string, v reflect.Value, depth int) {
	if v.IsNil() {
		w.u64(math.MaxUint64)
		return
	}
	type entry struct {
		key  string
		k, v reflect.Value
	}
	var es []entry
	for it := v.MapRange(); it.Next(); {
		sub := &Hasher{h: sha256.New(), rules: w.rules, seen: w.seen}
		sub.Value(path+"[key]", it.Key(), depth+1)
		w.unnamed = append(w.unnamed, sub.unnamed...)
		es = append(es, entry{key: string(sub.h.Sum(nil)), k: it.Key(), v: it.Value()})
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	w.u64(uint64(len(es)))
	for _, e := range es {
		w.Str(e.key)
		w.Value(path+"["+fmt.Sprint(e.k)+"]", e.v, depth+1)
	}
}

// Describe lists the settings held in root (a struct, or a pointer to
// one) by path (Chains.Warmup) down to levels of struct fields, with
// the value of each as text: a number, string or bool as written, a
// nil pointer or interface as "nil", anything else (a slice, a map, a
// struct below the levels) as its type and a digest of its value by
// rules. Fields rules skip are left out. Merges compare the lists to name
// the setting in which two runs differ (Differ).
func Describe(root any, levels int, rules *HashRules) map[string]string {
	out := map[string]string{}
	describe(out, "", reflect.ValueOf(root), levels, rules)
	return out
}

func describe(out map[string]string, path string, v reflect.Value, levels int, rules *HashRules) {
	prefix := ""
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			out[path] = "nil"
			return
		}
		if v.Kind() == reflect.Interface {
			prefix = v.Elem().Type().String()
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Bool:
		out[path] = strconv.FormatBool(v.Bool())
		return
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		out[path] = strconv.FormatInt(v.Int(), 10)
		return
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		out[path] = strconv.FormatUint(v.Uint(), 10)
		return
	case reflect.Float32, reflect.Float64:
		out[path] = strconv.FormatFloat(v.Float(), 'g', -1, 64)
		return
	case reflect.String:
		out[path] = strconv.Quote(v.String())
		return
	case reflect.Struct:
		if levels > 0 {
			if prefix != "" && path != "" {
				out[path] = prefix
			}
			t := v.Type()
			for i := range t.NumField() {
				f := t.Field(i)
				if rules != nil && rules.Skip != nil && rules.Skip(t, f.Name) {
					continue
				}
				sub := f.Name
				if path != "" {
					sub = path + "." + f.Name
				}
				describe(out, sub, v.Field(i), levels-1, rules)
			}
			return
		}
	}
	w := NewHasher("", rules)
	w.Value(path, v, 0)
	if prefix == "" {
		prefix = v.Type().String()
	}
	out[path] = prefix + " #" + w.Sum()[:12]
}

// KeysOfBoth returns the keys of a and of b, each once, sorted.
func KeysOfBoth[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// Differ names the first setting (in the order of their paths) whose
// value differs between the lists a and b of Describe, as "Warmup = 100
// vs 1000"; "" when they agree.
func Differ(a, b map[string]string) string {
	for _, k := range KeysOfBoth(a, b) {
		va, oka := a[k]
		vb, okb := b[k]
		switch {
		case !oka:
			va = "(none)"
		case !okb:
			vb = "(none)"
		}
		if va != vb {
			return fmt.Sprintf("%s = %s vs %s", k, va, vb)
		}
	}
	return ""
}
