package trj

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"strconv"

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
	w := runs.NewHasher("trj run v2", fingerprintRules)
	w.Value("Settings", reflect.ValueOf(s).Elem(), 0)
	rng := runs.Stream(0, "fingerprint", 0)
	for k := range space.NumModels() {
		lp, _ := space.LogPrior(k)
		// Model values to 12 digits: the same on every machine a shard may
		// run on (fused multiply-adds can change the last bits).
		fmt.Fprintln(w, space.ModelLabel(k), space.ModelDim(k), strconv.FormatFloat(lp, 'g', 12, 64))
		m, err := space.Model(k)
		if err != nil {
			fmt.Fprintln(w, "no model:", err)
			continue
		}
		fmt.Fprintln(w, m.ParamNames())
		m = m.Clone()
		x := make([]float64, m.Dim())
		for range 3 {
			for i := range x {
				x[i] = 0.5 * rng.NormFloat64()
			}
			v, err := m.LogDensity(x)
			fmt.Fprintln(w, strconv.FormatFloat(v, 'g', 12, 64), err != nil)
		}
	}
	if s.Tag == "" {
		unnamed = w.Unnamed()
	}
	return w.Sum(), unnamed
}

// describeSettings lists s's settings two levels deep (Chains.Warmup),
// for Merge to name the setting in which two runs differ.
func describeSettings(s *Settings) map[string]string {
	return runs.Describe(s, 2, fingerprintRules)
}

// fingerprintRules are what the fingerprint of a run leaves out, hashes
// by bytes or by name.
var fingerprintRules = &runs.HashRules{
	Skip:    fingerprintSkip,
	Special: hashLoaded,
	Funcs: map[uintptr]string{
		reflect.ValueOf(NormalIndependence).Pointer(): "NormalIndependence",
	},
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

// hashLoaded hashes a LoadedTransports set by its bytes.
func hashLoaded(w *runs.Hasher, path string, v reflect.Value, depth int) bool {
	l, ok := loadedOf(v)
	if !ok {
		return false
	}
	w.Str("loaded transports")
	data, err := l.load()
	if err != nil {
		w.Str("unreadable: " + err.Error())
	} else {
		sum := sha256.Sum256(data)
		w.Write(sum[:])
	}
	w.Value(path+".Builders", reflect.ValueOf(l.Builders), depth+1)
	w.Value(path+".Permutations", reflect.ValueOf(l.Permutations), depth+1)
	w.Value(path+".Aux", reflect.ValueOf(&l.Aux).Elem(), depth+1)
	return true
}

// loadedOf returns the *LoadedTransports v holds, if any.
func loadedOf(v reflect.Value) (*LoadedTransports, bool) {
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type() != reflect.TypeFor[*LoadedTransports]() || !v.CanInterface() {
		return nil, false
	}
	return v.Interface().(*LoadedTransports), true
}
