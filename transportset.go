package trj

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// transportSetMagic opens a transport set file; the number is its version.
const transportSetMagic = "trj transport set v1\n"

// transportEntry describes one flow of a transport set: the model it
// belongs to (label and dimension, checked on load), its kind and the size
// of its flows.Save encoding, which follows the header in entry order.
type transportEntry struct {
	Label string
	Dim   int
	Kind  string
	Bytes int
}

// SaveTransports writes the run's fitted transports, with the model and
// dimension each belongs to, as one transport set that
// Settings.Transport.Load reads back (and checks against the space).
func (r *Result) SaveTransports(w io.Writer) error {
	if r == nil || (r.transports == nil && r.conditional == nil) {
		return errors.New("trj: the result has no fitted transports to save")
	}
	var entries []transportEntry
	var body bytes.Buffer
	add := func(label string, dim int, kind string, t any) error {
		f, ok := t.(flows.Flow)
		if !ok {
			return fmt.Errorf("trj: the transport of model %q is a %T, which flows.Save cannot write", label, t)
		}
		n := body.Len()
		if err := flows.Save(&body, f); err != nil {
			return fmt.Errorf("trj: saving the transport of model %q: %w", label, err)
		}
		entries = append(entries, transportEntry{Label: label, Dim: dim, Kind: kind, Bytes: body.Len() - n})
		return nil
	}
	if r.conditional != nil {
		if err := add("*", r.conditional.MaxDim(), "conditional RQMA", r.conditional); err != nil {
			return err
		}
	} else {
		for k, t := range r.transports {
			if err := add(r.Labels[k], r.Dims[k], r.Transports[k].Kind, t); err != nil {
				return err
			}
		}
	}
	head, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(transportSetMagic)
	bw.Write(head)
	bw.WriteByte('\n')
	bw.Write(body.Bytes())
	return bw.Flush()
}

// loadTransports reads a transport set and checks it against the space:
// per-model transports, or one conditional flow.
func loadTransports(r io.Reader, space *ppl.Space) ([]kernels.Transport, *flows.ConditionalRQMA, error) {
	br := bufio.NewReader(r)
	magic, err := br.ReadString('\n')
	if err != nil || magic != transportSetMagic {
		if len(magic) > 4 && magic[:4] == "trj " {
			return nil, nil, fmt.Errorf("trj: transport set of an unsupported version (%q; this trj reads %q)", magic[:len(magic)-1], transportSetMagic[:len(transportSetMagic)-1])
		}
		return nil, nil, errors.New("trj: not a transport set (written by Result.SaveTransports)")
	}
	line, err := br.ReadBytes('\n')
	if err != nil {
		return nil, nil, fmt.Errorf("trj: transport set header: %w", err)
	}
	var entries []transportEntry
	if err := json.Unmarshal(line, &entries); err != nil {
		return nil, nil, fmt.Errorf("trj: transport set header: %w", err)
	}
	read := func(e transportEntry) (any, error) {
		if e.Bytes <= 0 || e.Bytes > 1<<30 {
			return nil, fmt.Errorf("trj: transport set entry %q has size %d", e.Label, e.Bytes)
		}
		buf := make([]byte, e.Bytes)
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, fmt.Errorf("trj: transport of model %q: %w", e.Label, err)
		}
		f, err := flows.Load(bytes.NewReader(buf))
		if err != nil {
			return nil, fmt.Errorf("trj: transport of model %q: %w", e.Label, err)
		}
		return f, nil
	}
	if len(entries) == 1 && entries[0].Label == "*" {
		f, err := read(entries[0])
		if err != nil {
			return nil, nil, err
		}
		c, ok := f.(*flows.ConditionalRQMA)
		if !ok || c.MaxDim() != space.MaxDim() || c.NumModels() != space.NumModels() {
			return nil, nil, fmt.Errorf("trj: the saved conditional transport does not fit the space (%d models, saturated dimension %d)", space.NumModels(), space.MaxDim())
		}
		return nil, c, nil
	}
	if len(entries) != space.NumModels() {
		return nil, nil, fmt.Errorf("trj: the transport set has %d transports, the space has %d models", len(entries), space.NumModels())
	}
	ts := make([]kernels.Transport, len(entries))
	for k, e := range entries {
		if e.Label != space.ModelLabel(k) || e.Dim != space.ModelDim(k) {
			return nil, nil, fmt.Errorf("trj: saved transport %d is for model %q of dimension %d, the space's model %d is %q of dimension %d", k, e.Label, e.Dim, k, space.ModelLabel(k), space.ModelDim(k))
		}
		f, err := read(e)
		if err != nil {
			return nil, nil, err
		}
		t, ok := f.(kernels.Transport)
		if !ok || t.Dim() != e.Dim {
			return nil, nil, fmt.Errorf("trj: saved transport of model %q is not a transport of dimension %d", e.Label, e.Dim)
		}
		ts[k] = t
	}
	return ts, nil, nil
}
