package runs

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime/debug"
	"strings"
)

// MaxChains bounds the chains of one run: each needs a goroutine, a kernel
// and a random stream, and more than this many are a mistake, not a run.
const MaxChains = 1 << 16

// Names names a run's settings in its errors: as the fields of a settings
// struct ("selection: Settings.Steps = 0") or, when Flags is set, as the
// flags of a command ("-steps 0").
type Names struct {
	// Pkg starts every error ("trj", "selection"); none when empty.
	Pkg string
	// Path is the fields' path in the settings ("Chains.", "Settings.").
	Path string
	// Flags, when non-nil, maps a field ("Steps") to the flag that sets
	// it ("steps"); fields without a flag keep their field name.
	Flags map[string]string
}

// Name is field's name in errors: "Settings.Steps" or "-steps".
func (n Names) Name(field string) string {
	if f, ok := n.Flags[field]; ok {
		return "-" + f
	}
	return n.Path + field
}

// Is says that field has the value v: "Settings.Steps = 5" or "-steps 5".
func (n Names) Is(field string, v any) string {
	if _, ok := n.Flags[field]; ok {
		return fmt.Sprintf("%s %v", n.Name(field), v)
	}
	return fmt.Sprintf("%s = %v", n.Name(field), v)
}

// Error returns the error of field out of its bounds: text writes its
// message with the settings named by the Names it is given, so that a
// command can name them by its flags (SettingError.WithFlags). err, when
// not nil, is wrapped.
func (n Names) Error(field string, err error, text func(n Names) string) *SettingError {
	return &SettingError{Field: field, names: n, text: text, err: err}
}

// SettingError is a setting out of its bounds, found before any work.
type SettingError struct {
	// Field is the setting's field in its struct ("Steps").
	Field string
	names Names
	text  func(Names) string
	err   error
}

// Error names the setting as Names did when the error was made.
func (e *SettingError) Error() string {
	if e.names.Pkg == "" {
		return e.text(e.names)
	}
	return e.names.Pkg + ": " + e.text(e.names)
}

// Unwrap returns the cause it wraps, if any (ErrTooLarge).
func (e *SettingError) Unwrap() error { return e.err }

// WithFlags returns the error with the settings named by the flags that
// set them (flags maps a field to its flag), for a command whose user
// gave flags, not fields.
func (e *SettingError) WithFlags(flags map[string]string) *SettingError {
	c := *e
	c.names = Names{Flags: flags, Path: e.names.Path}
	return &c
}

// Counts are the chain counts a run's settings ask for, after defaults.
type Counts struct {
	// Chains is the number of chains of the whole run, Warmup and Steps
	// the discarded and kept steps of each.
	Chains, Warmup, Steps int
	// MinSteps is the fewest kept steps a chain may have (at least 1).
	MinSteps int
	// Shard, when non-nil, lists the chains this process runs.
	Shard []int
}

// Check refuses counts a run cannot have, before anything is allocated:
// chains outside [1, MaxChains], fewer kept steps than MinSteps, a
// negative warm-up, warm-up plus kept steps that overflow an int, and a
// shard that is empty or holds a chain outside [0, Chains) or twice. n
// names the settings in the error (a *SettingError).
func (c Counts) Check(n Names) error {
	switch {
	case c.Chains < 1:
		return n.Error("Chains", nil, func(n Names) string {
			return fmt.Sprintf("%s: need at least 1 chain", n.Is("Chains", c.Chains))
		})
	case c.Chains > MaxChains:
		return n.Error("Chains", nil, func(n Names) string {
			return fmt.Sprintf("%s: at most %d chains (each needs a goroutine and a kernel); lower %s", n.Is("Chains", c.Chains), MaxChains, n.Name("Chains"))
		})
	case c.Steps < max(c.MinSteps, 1):
		return n.Error("Steps", nil, func(n Names) string {
			return fmt.Sprintf("%s: need at least %d kept steps per chain", n.Is("Steps", c.Steps), max(c.MinSteps, 1))
		})
	case c.Warmup < 0:
		return n.Error("Warmup", nil, func(n Names) string {
			return fmt.Sprintf("%s: the warm-up must not be negative", n.Is("Warmup", c.Warmup))
		})
	case c.Warmup > math.MaxInt-c.Steps:
		return n.Error("Warmup", nil, func(n Names) string {
			return fmt.Sprintf("%s + %s overflow an int: lower them", n.Is("Warmup", c.Warmup), n.Is("Steps", c.Steps))
		})
	case c.Shard != nil && len(c.Shard) == 0:
		return n.Error("Shard", nil, func(n Names) string {
			return fmt.Sprintf("%s is empty: list the chains to run (nil runs them all)", n.Name("Shard"))
		})
	}
	seen := make(map[int]bool, len(c.Shard))
	for _, ch := range c.Shard {
		switch {
		case ch < 0 || ch >= c.Chains:
			return n.Error("Shard", nil, func(n Names) string {
				return fmt.Sprintf("%s holds chain %d: chains are numbered 0 to %d (%s)", n.Name("Shard"), ch, c.Chains-1, n.Is("Chains", c.Chains))
			})
		case seen[ch]:
			return n.Error("Shard", nil, func(n Names) string {
				return fmt.Sprintf("%s holds chain %d twice", n.Name("Shard"), ch)
			})
		}
		seen[ch] = true
	}
	return nil
}

// Run returns the numbers of the chains to run: the shard's, or 0 …
// Chains−1. Call it after Check.
func (c Counts) Run() []int {
	if c.Shard != nil {
		return c.Shard
	}
	run := make([]int, c.Chains)
	for i := range run {
		run[i] = i
	}
	return run
}

// CheckMemory refuses, with a *SettingError naming Steps and Chains, the
// counts' chains to run (the shard's, or all) when each keeping the given
// items cannot fit in memory (see the package function CheckMemory).
func (c Counts) CheckMemory(n Names, kept ...Kept) error {
	chains := c.Chains
	if c.Shard != nil {
		chains = len(c.Shard)
	}
	err := CheckMemory(chains, kept...)
	if err == nil {
		return nil
	}
	return n.Error("Steps", err, func(n Names) string {
		return fmt.Sprintf("%s: %v; lower %s or %s", n.Is("Steps", c.Steps), err, n.Name("Steps"), n.Name("Chains"))
	})
}

// ErrTooLarge is wrapped by the errors of runs that cannot fit in memory.
var ErrTooLarge = errors.New("run too large")

// Kept is what each chain of a run keeps of one kind: N items of Bytes
// bytes each, What they are ("kept steps", "stored draws of dimension 3").
type Kept struct {
	N, Bytes uint64
	What     string
}

// chainOverheadBytes is a lower bound on the memory of a chain besides
// what it keeps: a goroutine, its kernel's scratch and its target.
const chainOverheadBytes = 16 << 10

// CheckMemory refuses chains chains that each keep the given items when
// they need more bytes than an int holds, or than the machine's memory (or
// the Go memory limit) when it is known: the one memory rule of every run,
// kernels' Sample and SampleRJ included. Its error wraps ErrTooLarge and
// says how much the run would need.
func CheckMemory(chains int, kept ...Kept) error {
	need, ok := uint64(chainOverheadBytes), true
	whats := make([]string, len(kept))
	for i, k := range kept {
		if ok {
			need, ok = mulAdd(k.N, k.Bytes, need)
		}
		whats[i] = fmt.Sprintf("%d %s", k.N, k.What)
	}
	if ok {
		need, ok = mulAdd(need, uint64(max(chains, 0)), 0)
	}
	limit := MemoryLimit()
	if ok && (limit == 0 || need <= limit) {
		return nil
	}
	what := strings.Join(whats, " + ")
	if len(kept) > 1 {
		what = "(" + what + ")"
	}
	what = fmt.Sprintf("%d chains × %s", chains, what)
	if !ok {
		return fmt.Errorf("%w: %s need more than 2⁶⁴ bytes", ErrTooLarge, what)
	}
	return fmt.Errorf("%w: %s need %s, more than the %s available", ErrTooLarge, what, formatBytes(need), formatBytes(limit))
}

// mulAdd returns a·b + c and whether it fits in a uint64 (and an int).
func mulAdd(a, b, c uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	sum, carry := bits.Add64(lo, c, 0)
	return sum, hi == 0 && carry == 0 && sum <= math.MaxInt
}

// formatBytes prints n in the largest binary unit that keeps it ≥ 1.
func formatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.3g %s", v, units[u])
}

// MemoryLimit is the smaller of the Go memory limit (GOMEMLIMIT) and the
// machine's memory, or 0 when neither is known.
func MemoryLimit() uint64 {
	limit := uint64(0)
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		limit = uint64(l)
	}
	if m := physicalMemory(); m > 0 && (limit == 0 || m < limit) {
		limit = m
	}
	return limit
}
