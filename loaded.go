package trj

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// LoadedTransports reads a transport set written by Fitted.Save (a
// flows.SaveSet set) instead of fitting: per-model transports run TRJ, a
// conditional flow CTRJ. The set must match the space.
type LoadedTransports struct {
	// From is the set. It is read to the end once, before the pilots (so
	// that a set which does not fit the space is refused at once), and the
	// bytes kept: later runs with the same value reuse them (one at a
	// time: runs at once need a value each).
	From io.Reader
	// Builders rebuild user-written flows (flows.GraphFlow), by model
	// label; nil when the set has none.
	Builders map[string]flows.Builder
	// Permutations is TRJ's map h̄ for per-model transports (see
	// kernels.TRJConfig).
	Permutations [][][]int
	// Aux is CTRJ's auxiliary density for a conditional flow (the standard
	// normal when nil).
	Aux kernels.AuxiliaryDensity

	read io.Reader // the From that data was read from
	data []byte
}

// load reads From, once for each reader.
func (l *LoadedTransports) load() ([]byte, error) {
	if l.From == nil {
		return nil, fmt.Errorf("trj: loaded transports: From is nil")
	}
	if l.read != nil && sameReader(l.read, l.From) {
		return l.data, nil
	}
	data, err := io.ReadAll(l.From)
	if err != nil {
		return nil, fmt.Errorf("trj: reading the transport set: %w", err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("trj: loaded transports: From is empty (a reader already read to its end?)")
	}
	l.read, l.data = l.From, data
	return data, nil
}

// sameReader reports whether a and b are the same reader, without the
// panic of == on readers of incomparable types.
func sameReader(a, b io.Reader) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// Name implements Proposals.
func (l *LoadedTransports) Name() string { return "loaded" }

// CheckSpace implements SpaceChecker: the set's models and the
// permutations must fit the space.
func (l *LoadedTransports) CheckSpace(space *ppl.Space) error {
	if _, err := l.fitSpace(space); err != nil {
		return err
	}
	return checkPermutations(l.Permutations, space)
}

// Reload implements Reloader.
func (l *LoadedTransports) Reload(set io.Reader) Proposals {
	return &LoadedTransports{From: set, Permutations: l.Permutations, Builders: l.Builders, Aux: l.Aux}
}

// oldSetMagic opens the transport sets of trj before they were flows sets.
const oldSetMagic = "trj transport set v"

// Fit implements Proposals.
func (l *LoadedTransports) Fit(_ context.Context, d *FitData) (FittedProposals, error) {
	return l.fitSpace(d.Space)
}

// fitSpace reads the set and checks it against space (Run does before the
// pilots).
func (l *LoadedTransports) fitSpace(space *ppl.Space) (FittedProposals, error) {
	data, err := l.load()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(bytes.NewReader(data))
	if head, _ := br.Peek(len(oldSetMagic) + 8); strings.HasPrefix(string(head), oldSetMagic) {
		v, _, _ := strings.Cut(string(head), "\n")
		return nil, fmt.Errorf("trj: the transport set is of the old format %q: this trj reads flows sets (set version %d), written by Fitted.Save: fit the transports again", v, flows.SetVersion)
	}
	set, err := flows.LoadSet(br, l.Builders)
	if err != nil {
		return nil, fmt.Errorf("trj: loading transports: %w", err)
	}
	if len(set) == 1 && set[0].Model == conditionalLabel {
		c, ok := set[0].Flow.(*flows.ConditionalRQMA)
		if !ok || c.MaxDim() != space.MaxDim() || c.NumModels() != space.NumModels() {
			return nil, fmt.Errorf("trj: the saved conditional transport does not fit the space (%d models, saturated dimension %d)", space.NumModels(), space.MaxDim())
		}
		return newCTRJFit(space, c, l.Aux, "loaded"), nil
	}
	K := space.NumModels()
	if len(set) != K {
		return nil, fmt.Errorf("trj: the transport set has %d transports, the space has %d models", len(set), K)
	}
	p := &perModel{space: space, ts: make([]kernels.Transport, K), reports: make([]TransportReport, K), perms: l.Permutations}
	for k, e := range set {
		if e.Model != space.ModelLabel(k) || e.Dim != space.ModelDim(k) {
			return nil, fmt.Errorf("trj: saved transport %d is for model %q of dimension %d, the space's model %d is %q of dimension %d", k, e.Model, e.Dim, k, space.ModelLabel(k), space.ModelDim(k))
		}
		t, ok := e.Flow.(kernels.Transport)
		if !ok {
			return nil, fmt.Errorf("trj: saved transport of model %q is not a transport", e.Model)
		}
		p.ts[k], p.reports[k] = t, TransportReport{Kind: "loaded"}
	}
	p.clone = func(k int) (kernels.Transport, error) { return cloneFlow(p.ts[k]) }
	return p, nil
}
