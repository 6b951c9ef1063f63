package trj

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

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/ppl"
)

// fingerprint identifies a run: two runs of the same space and settings
// have the same one, and runs that differ in the models (labels,
// dimensions, parameter names, prior, and log-densities at fixed points,
// which tell different data apart) or in the value of any setting have
// different ones. Every field of s is hashed by value, recursively through
// pointers, slices, maps, structs and interfaces (by dynamic type and
// value), except what cannot change the computation: Settings.Chains.Shard,
// Settings.OutputDir, Pilot.From's fitted proposals (Run reuses only the
// pilots), every field named Progress (hooks that observe) and
// flows.TrainOptions.Cache (compiled programs lent between fits). A
// LoadedTransports set is hashed by its bytes.
//
// Functions cannot be hashed (nor channels): unnamed lists the paths of
// those set in s (Chains.Start, SMCPilots.Tempered, UserTransports.New, a
// family of one's own's functions...), whose presence alone is hashed.
// Settings.Tag (hashed too) names them: with a Tag, unnamed is nil. Functions of this
// package given as values (NormalIndependence) are hashed by name.
func fingerprint(space *ppl.Space, s *Settings) (fp string, unnamed []string) {
	h := sha256.New()
	w := &hasher{h: h, seen: map[uintptr]bool{}}
	fmt.Fprintln(h, "trj run v2")
	w.value("Settings", reflect.ValueOf(s).Elem(), 0)
	rng := runs.Stream(0, "fingerprint", 0)
	for k := range space.NumModels() {
		lp, _ := space.LogPrior(k)
		// Model values to 12 digits: the same on every machine a shard may
		// run on (fused multiply-adds can change the last bits).
		fmt.Fprintln(h, space.ModelLabel(k), space.ModelDim(k), strconv.FormatFloat(lp, 'g', 12, 64))
		m, err := space.Model(k)
		if err != nil {
			fmt.Fprintln(h, "no model:", err)
			continue
		}
		fmt.Fprintln(h, m.ParamNames())
		m = m.Clone()
		x := make([]float64, m.Dim())
		for range 3 {
			for i := range x {
				x[i] = 0.5 * rng.NormFloat64()
			}
			v, err := m.LogDensity(x)
			fmt.Fprintln(h, strconv.FormatFloat(v, 'g', 12, 64), err != nil)
		}
	}
	if s.Tag != "" {
		unnamed = nil
	} else {
		unnamed = w.unnamed
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), unnamed
}

// hasher writes values into a hash by reflection.
type hasher struct {
	h       hash.Hash
	seen    map[uintptr]bool // pointers on the current path (cycles)
	unnamed []string
	buf     [8]byte
}

// fingerprintSkip reports whether field name of struct type t is left out
// of the fingerprint (see fingerprint).
func fingerprintSkip(t reflect.Type, name string) bool {
	switch {
	case name == "Progress", name == "Cache" && t == reflect.TypeFor[flows.TrainOptions]():
		return true
	case t == reflect.TypeFor[Settings]():
		return name == "OutputDir"
	case t == reflect.TypeFor[ChainSettings]():
		return name == "Shard"
	case t == reflect.TypeFor[Fitted]():
		return name == "Proposals"
	}
	return false
}

// knownFuncs are the functions of this package a setting may hold, hashed
// by name.
var knownFuncs = map[uintptr]string{
	reflect.ValueOf(NormalIndependence).Pointer(): "NormalIndependence",
}

func (w *hasher) str(s string) {
	binary.LittleEndian.PutUint64(w.buf[:], uint64(len(s)))
	w.h.Write(w.buf[:])
	io.WriteString(w.h, s)
}

func (w *hasher) u64(u uint64) {
	binary.LittleEndian.PutUint64(w.buf[:], u)
	w.h.Write(w.buf[:])
}

// value hashes v, found at path.
func (w *hasher) value(path string, v reflect.Value, depth int) {
	if depth > 100 {
		w.str("deep")
		return
	}
	if l, ok := loadedOf(v); ok {
		w.str("loaded transports")
		data, err := l.load()
		if err != nil {
			w.str("unreadable: " + err.Error())
		} else {
			sum := sha256.Sum256(data)
			w.h.Write(sum[:])
		}
		w.value(path+".Builders", reflect.ValueOf(l.Builders), depth+1)
		w.value(path+".Permutations", reflect.ValueOf(l.Permutations), depth+1)
		w.value(path+".Aux", reflect.ValueOf(&l.Aux).Elem(), depth+1)
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
		w.str(v.String())
	case reflect.Slice, reflect.Array:
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
			w.value(path+"["+strconv.Itoa(i)+"]", v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() {
			w.u64(math.MaxUint64)
			return
		}
		// Entries in the order of their keys' hashes.
		type entry struct {
			key string
			v   reflect.Value
			k   reflect.Value
		}
		var es []entry
		for it := v.MapRange(); it.Next(); {
			sub := &hasher{h: sha256.New(), seen: w.seen}
			sub.value(path+"[key]", it.Key(), depth+1)
			w.unnamed = append(w.unnamed, sub.unnamed...)
			es = append(es, entry{key: string(sub.h.Sum(nil)), k: it.Key(), v: it.Value()})
		}
		slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.key, b.key) })
		w.u64(uint64(len(es)))
		for _, e := range es {
			w.str(e.key)
			w.value(path+"["+fmt.Sprint(e.k)+"]", e.v, depth+1)
		}
	case reflect.Pointer:
		if v.IsNil() {
			w.u64(0)
			return
		}
		p := v.Pointer()
		if w.seen[p] {
			w.str("cycle")
			return
		}
		w.seen[p] = true
		w.u64(1)
		w.value(path, v.Elem(), depth+1)
		delete(w.seen, p)
	case reflect.Interface:
		if v.IsNil() {
			w.u64(0)
			return
		}
		e := v.Elem()
		w.str(e.Type().PkgPath() + " " + e.Type().String())
		w.value(path, e, depth+1)
	case reflect.Struct:
		t := v.Type()
		w.str(t.PkgPath() + " " + t.String())
		for i := range t.NumField() {
			f := t.Field(i)
			if fingerprintSkip(t, f.Name) {
				continue
			}
			w.str(f.Name)
			w.value(path+"."+f.Name, v.Field(i), depth+1)
		}
	case reflect.Func:
		if v.IsNil() {
			w.u64(0)
			return
		}
		if name, ok := knownFuncs[v.Pointer()]; ok {
			w.str(name)
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

// loadedOf returns the *LoadedTransports v holds, if any.
func loadedOf(v reflect.Value) (*LoadedTransports, bool) {
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type() != reflect.TypeFor[*LoadedTransports]() || !v.CanInterface() {
		return nil, false
	}
	return v.Interface().(*LoadedTransports), true
}
