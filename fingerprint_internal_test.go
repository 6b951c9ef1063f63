package trj

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// gaussSpace is models k = 0, 1, ...: θ ~ N(means[k], 1) (dimension k%2+1),
// each coordinate with one datum y ~ N(θ, 1).
func gaussSpace(t testing.TB, y float64, means ...float64) *ppl.Space {
	t.Helper()
	var models []ppl.Model
	for k, m := range means {
		b := ppl.NewBuilder()
		d := k%2 + 1
		theta := b.Real("theta", d)
		b.Sample(ppl.Normal{Mu: m, Sigma: 1}, theta)
		ys := make([]float64, d)
		for i := range ys {
			ys[i] = y
		}
		b.Sample(ppl.Normal{Mu: theta, Sigma: 1}, b.Data("y", ys))
		model, err := b.Model()
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, model)
	}
	space, err := ppl.NewSpace(models)
	if err != nil {
		t.Fatal(err)
	}
	return space
}

// fingerprintSamples are values of the interface types met in Settings;
// the walk fails on an interface type without one.
func fingerprintSamples() map[reflect.Type][]any {
	return map[reflect.Type][]any{
		reflect.TypeFor[Proposals](): {&AutoTransports{}, &AffineTransports{}, &RQMATransports{}, &UserTransports{},
			&Conditional{}, &IndependentAux{}, &Independence{}, &LoadedTransports{From: strings.NewReader("a set")}},
		reflect.TypeFor[PilotMethod]():              {&NUTSPilots{}, &SMCPilots{}, &GivenPilots{}},
		reflect.TypeFor[WithinMove]():               {&NUTSMove{}, &RandomWalkMove{}},
		reflect.TypeFor[kernels.SMCMove]():          {kernels.SMCEigenRWM{}, kernels.SMCRWM{}, kernels.SMCNUTS{}},
		reflect.TypeFor[kernels.AuxiliaryDensity](): {kernels.NormalAux{Mean: 1, SD: 2}},
		reflect.TypeFor[io.Reader]():                {strings.NewReader("another set")},
		reflect.TypeFor[FittedProposals]():          {&perModel{}},
	}
}

// fingerprintIgnored are the settings that cannot change the computation.
func fingerprintIgnored(path string) bool {
	return strings.HasSuffix(path, ".Progress") || strings.HasSuffix(path, ".Train.Cache") || slices.Contains([]string{
		"Settings.OutputDir", "Settings.Chains.Shard", "Settings.Pilot.From.Proposals"}, path)
}

// TestFingerprintEveryField walks Settings by reflection, recursively
// (through pointers, slices and the interface types' sample values), and
// changes every field in turn: each change changes the fingerprint, except
// the fields that cannot change the computation, which leave it alone. A
// field added to Settings (or to a family) is covered without editing the
// test. A function set is reported as unnamed unless Settings.Tag names it.
func TestFingerprintEveryField(t *testing.T) {
	space := gaussSpace(t, 0.5, 0, 1)
	var s Settings
	samples := fingerprintSamples()
	leaves := 0
	change := func(path string, apply, undo func(), isFunc bool) {
		before, _ := fingerprint(space, &s)
		apply()
		after, unnamed := fingerprint(space, &s)
		leaves++
		plain := typeNote.ReplaceAllString(path, "") // the hasher's path
		ignored := fingerprintIgnored(plain)
		switch {
		case ignored && after != before:
			t.Errorf("%s: changes the fingerprint, but cannot change the run", path)
		case !ignored && after == before:
			t.Errorf("%s: changing it leaves the fingerprint as it was", path)
		case isFunc && !ignored && !slices.Contains(unnamed, plain):
			t.Errorf("%s: a function set, not reported as unnamed (%v)", path, unnamed)
		}
		if isFunc && !ignored {
			s.Tag = "named"
			if _, unnamed := fingerprint(space, &s); unnamed != nil {
				t.Errorf("%s: with a Tag, still unnamed %v", path, unnamed)
			}
			s.Tag = ""
		}
		_ = undo
	}
	var walk func(path string, v reflect.Value, depth int)
	walk = func(path string, v reflect.Value, depth int) {
		if depth > 12 {
			t.Fatalf("%s: too deep", path)
		}
		old := reflect.New(v.Type()).Elem()
		old.Set(v)
		restore := func() { v.Set(old) }
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.IsExported() {
					walk(path+"."+f.Name, v.Field(i), depth+1)
				}
			}
			return
		case reflect.Bool:
			change(path, func() { v.SetBool(!v.Bool()) }, restore, false)
		case reflect.Int, reflect.Int64, reflect.Int32:
			change(path, func() { v.SetInt(v.Int() + 3) }, restore, false)
			change(path+" (negative)", func() { v.SetInt(-v.Int() - 1) }, restore, false)
		case reflect.Uint64, reflect.Uint, reflect.Uint32:
			change(path, func() { v.SetUint(v.Uint() + 3) }, restore, false)
		case reflect.Float64:
			change(path, func() { v.SetFloat(v.Float() + 0.25) }, restore, false)
			change(path+" (NaN)", func() { v.SetFloat(math.NaN()) }, restore, false)
			change(path+" (-0)", func() { v.SetFloat(math.Copysign(0, -1)) }, restore, false)
		case reflect.String:
			change(path, func() { v.SetString(v.String() + "x") }, restore, false)
		case reflect.Func:
			change(path, func() {
				v.Set(reflect.MakeFunc(v.Type(), func([]reflect.Value) []reflect.Value { panic("not called") }))
			}, restore, true)
		case reflect.Map:
			change(path, func() {
				m := reflect.MakeMap(v.Type())
				m.SetMapIndex(reflect.ValueOf("a key").Convert(v.Type().Key()), reflect.New(v.Type().Elem()).Elem())
				v.Set(m)
			}, restore, false)
		case reflect.Slice:
			change(path, func() { v.Set(reflect.MakeSlice(v.Type(), 1, 1)) }, restore, false)
			if !fingerprintIgnored(path) {
				walk(path+"[0]", v.Index(0), depth+1)
			}
		case reflect.Pointer:
			change(path, func() { v.Set(reflect.New(v.Type().Elem())) }, restore, false)
			if e := v.Type().Elem(); e.Kind() == reflect.Struct && e.PkgPath() != "" && !fingerprintIgnored(path) && hasExported(e) {
				walk(path, v.Elem(), depth+1)
			}
		case reflect.Interface:
			vals, ok := samples[v.Type()]
			if !ok {
				t.Errorf("%s: no sample value of interface type %v: add one to fingerprintSamples", path, v.Type())
				return
			}
			for _, x := range vals {
				xv := reflect.ValueOf(x)
				p := path + "{" + xv.Type().String() + "}"
				change(p, func() { v.Set(xv) }, restore, false)
				if fingerprintIgnored(path) {
					continue
				}
				if xv.Kind() == reflect.Pointer && xv.Elem().Kind() == reflect.Struct {
					walk(p, xv.Elem(), depth+1)
				}
			}
		default:
			t.Errorf("%s: kind %v not walked: extend the test", path, v.Kind())
		}
		v.Set(old)
	}
	walk("Settings", reflect.ValueOf(&s).Elem(), 0)
	t.Logf("%d changes checked", leaves)
	if leaves < 100 {
		t.Errorf("only %d changes: the walk missed Settings' fields", leaves)
	}
}

// typeNote marks, in a test path, the sample value an interface holds.
var typeNote = regexp.MustCompile(`\{[^}]*\}`)

func hasExported(t reflect.Type) bool {
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			return true
		}
	}
	return false
}

// TestFingerprintDataAndDraws: the data, the models and the given pilot
// draws' values enter the fingerprint.
func TestFingerprintDataAndDraws(t *testing.T) {
	base, _ := fingerprint(gaussSpace(t, 0.5, 0, 1), &Settings{})
	for name, space := range map[string]*ppl.Space{
		"datum":      gaussSpace(t, 0.6, 0, 1),
		"prior mean": gaussSpace(t, 0.5, 0, 2),
		"models":     gaussSpace(t, 0.5, 0, 1, 2),
	} {
		if fp, _ := fingerprint(space, &Settings{}); fp == base {
			t.Errorf("%s changed, same fingerprint", name)
		}
	}
	space := gaussSpace(t, 0.5, 0, 1)
	given := func(v float64) *Settings {
		return &Settings{Pilot: PilotSettings{Method: GivenPilots{Draws: [][][][]float64{
			{{{0.1}, {0.2}}, {{0.3}, {v}}}, {{{0.1, 1}}, {{0.3, 2}}}}}}}
	}
	a, _ := fingerprint(space, given(0.4))
	b, _ := fingerprint(space, given(0.40000001))
	if a == b {
		t.Error("given draws that differ in one value: same fingerprint")
	}
	// A loaded set is hashed by its bytes, read once and kept.
	l := &LoadedTransports{From: bytes.NewReader([]byte("set one"))}
	s := &Settings{Proposals: l}
	f1, _ := fingerprint(space, s)
	f2, _ := fingerprint(space, s)
	l.From = bytes.NewReader([]byte("set two"))
	f3, _ := fingerprint(space, s)
	if f1 != f2 || f1 == f3 {
		t.Errorf("loaded sets: same set %s and %s, other set %s", f1, f2, f3)
	}
	// A family of this package's named function is hashed by name.
	if _, unnamed := fingerprint(space, &Settings{Proposals: &Independence{Proposal: NormalIndependence}}); unnamed != nil {
		t.Errorf("NormalIndependence reported unnamed: %v", unnamed)
	}
}
