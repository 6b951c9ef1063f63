package trj

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// runNames names the chains' settings in the errors of runs.Counts.
var runNames = runs.Names{Pkg: "trj", Path: "Chains."}

// minSteps is the fewest kept steps of a chain, as Settings.validate
// also requires.
const minSteps = 4

// validateRun checks, before the first pilot, what the settings ask of the
// later stages on this space, so that a run that cannot succeed fails at
// once instead of after its pilots: finite float settings, the chains'
// counts, shard and memory, the permutations of a per-model family, a
// loaded transport set's fit to the space and the chains' start
// (Chains.Start is called once per chain to be run, with a stream of its
// own, and its models and θ checked).
func (s *Settings) validateRun(space *ppl.Space) error {
	if err := checkFinite("Settings", reflect.ValueOf(s).Elem(), map[uintptr]bool{}); err != nil {
		return err
	}
	c := &s.Chains
	counts := runs.Counts{Chains: c.Chains, Warmup: c.Warmup, Steps: c.Steps, MinSteps: minSteps, Shard: c.Shard}
	if err := counts.Check(runNames); err != nil {
		return err
	}
	// Every round of a run that extends its chains keeps its steps.
	rj := kernels.RJSampleSettings{Chains: c.Chains, Shard: c.Shard, Steps: c.MaxSteps}
	if err := rj.CheckMemory(0); err != nil {
		return fmt.Errorf("trj: the chains (Chains.Steps %d, up to MaxSteps %d per chain when they extend): %w; lower Chains.Chains, Steps or MaxSteps (MaxSteps = Steps: no extension)", c.Steps, c.MaxSteps, err)
	}
	if c, ok := s.Proposals.(SpaceChecker); ok {
		if err := c.CheckSpace(space); err != nil {
			return fmt.Errorf("trj: %s transports: %w", s.Proposals.Name(), err)
		}
	}
	return s.checkStart(space)
}

// checkPermutations checks TRJ's map h̄ against the space's models.
func checkPermutations(perms [][][]int, space *ppl.Space) error {
	if perms == nil {
		return nil
	}
	dims := make([]int, space.NumModels())
	for k := range dims {
		dims[k] = space.ModelDim(k)
	}
	if err := kernels.CheckPermutations(perms, dims); err != nil {
		return fmt.Errorf("the Permutations field: %w", err)
	}
	return nil
}

// checkStart calls Chains.Start for every chain to be run and checks what
// it returns.
func (s *Settings) checkStart(space *ppl.Space) error {
	c := &s.Chains
	if c.Start == nil {
		return nil
	}
	chains := c.Shard
	if chains == nil {
		chains = make([]int, c.Chains)
		for i := range chains {
			chains[i] = i
		}
	}
	K := space.NumModels()
	models := make([]ppl.Model, K)
	for _, ch := range chains {
		k, theta, err := c.Start(ch, runs.Stream(s.Seed, "start check", ch))
		if err != nil {
			return fmt.Errorf("trj: Chains.Start of chain %d: %w", ch, err)
		}
		if k < 0 || k >= K {
			return fmt.Errorf("trj: Chains.Start of chain %d gives model %d: the space's models are 0 to %d", ch, k, K-1)
		}
		if len(theta) != space.ModelDim(k) {
			return fmt.Errorf("trj: Chains.Start of chain %d gives θ of length %d for model %q of dimension %d", ch, len(theta), space.ModelLabel(k), space.ModelDim(k))
		}
		if models[k] == nil {
			m, err := space.Model(k)
			if err != nil {
				return err
			}
			models[k] = m.Clone()
		}
		lp, err := models[k].LogDensity(theta)
		if err != nil || math.IsNaN(lp) || math.IsInf(lp, 0) {
			return fmt.Errorf("trj: Chains.Start of chain %d gives θ = %v where model %q has log density %v (%v): start where it is finite", ch, theta, space.ModelLabel(k), lp, err)
		}
	}
	return nil
}

// checkFinite refuses a NaN or infinite float anywhere in v (path names it),
// except in the given pilot draws and reused pilots (checked with their
// own messages) and in the families' fitted state.
func checkFinite(path string, v reflect.Value, seen map[uintptr]bool) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("trj: %s is %v: need a finite value", path, f)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := checkFinite(path+"["+strconv.Itoa(i)+"]", v.Index(i), seen); err != nil {
				return err
			}
		}
	case reflect.Pointer:
		if !v.IsNil() && !seen[v.Pointer()] {
			seen[v.Pointer()] = true // each value once, cycles included
			return checkFinite(path, v.Elem(), seen)
		}
	case reflect.Interface:
		if !v.IsNil() {
			return checkFinite(path, v.Elem(), seen)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || (t == reflect.TypeFor[PilotSettings]() && (f.Name == "Given" || f.Name == "From")) {
				continue
			}
			if err := checkFinite(path+"."+f.Name, v.Field(i), seen); err != nil {
				return err
			}
		}
	}
	return nil
}
