package flows

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Labeled is one flow of a fitted set: the model it transports (a label
// such as "k=2" or the model's name), the dimension it acts on and the flow
// (*Affine, *RQMA, *ConditionalRQMA or *GraphFlow).
type Labeled struct {
	Model string
	Dim   int
	Flow  Flow
}

// setMagic starts a file written by SaveSet.
var setMagic = [8]byte{'T', 'R', 'J', 'F', 'S', 'E', 'T', '\n'}

// SetVersion is the version of the set format written by SaveSet.
const SetVersion = 1

// maxLabel bounds a model label's length in a set file.
const maxLabel = 1 << 12

// flowDim is a flow's dimension (the saturated dimension of a conditional
// flow).
func flowDim(f Flow) (int, error) {
	if isNilFlow(f) {
		return 0, fmt.Errorf("flows: nil flow %T", f)
	}
	return f.savedDim(), nil
}

// SaveSet writes a fitted set of flows to w as one stream, each with the
// model it belongs to and its dimension, for LoadSet. Labels must be
// distinct and each Dim must be its flow's dimension.
func SaveSet(w io.Writer, set []Labeled) error {
	var e enc
	e.b.Write(setMagic[:])
	e.u32(SetVersion)
	e.u32(len(set))
	seen := make(map[string]bool, len(set))
	for i, l := range set {
		d, err := flowDim(l.Flow)
		if err != nil {
			return fmt.Errorf("flows: SaveSet entry %d (%q): %w", i, l.Model, err)
		}
		if d != l.Dim {
			return fmt.Errorf("flows: SaveSet entry %d (%q): Dim %d, but the flow has dimension %d", i, l.Model, l.Dim, d)
		}
		if len(l.Model) > maxLabel {
			return fmt.Errorf("flows: SaveSet entry %d: label of %d bytes", i, len(l.Model))
		}
		if seen[l.Model] {
			return fmt.Errorf("flows: SaveSet: model %q appears twice", l.Model)
		}
		seen[l.Model] = true
		var rec bytes.Buffer
		if err := Save(&rec, l.Flow); err != nil {
			return fmt.Errorf("flows: SaveSet entry %d (%q): %w", i, l.Model, err)
		}
		e.u32(len(l.Model))
		e.b.WriteString(l.Model)
		e.u32(l.Dim)
		e.u32(rec.Len())
		e.b.Write(rec.Bytes())
	}
	_ = binary.Write(&e.b, binary.LittleEndian, crc32.ChecksumIEEE(e.b.Bytes()))
	_, err := w.Write(e.b.Bytes())
	return err
}

// LoadSet reads a set written by SaveSet and checks that every flow has the
// dimension recorded for its model. User-written flows (GraphFlow) are
// rebuilt with builders[model]; builders may be nil when the set has none.
func LoadSet(r io.Reader, builders map[string]Builder) ([]Labeled, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrFormat, maxFileSize)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: nothing to read: the reader is empty or was already read to its end (a reader serves one load: open the file again for each run)", ErrFormat)
	}
	if bytes.HasPrefix(data, magic[:]) {
		return nil, fmt.Errorf("%w: the file holds a single flow written by Save, not a set; read it with Load", ErrFormat)
	}
	if len(data) < len(setMagic)+12 || !bytes.Equal(data[:len(setMagic)], setMagic[:]) {
		return nil, fmt.Errorf("%w: not a flow set (bad magic or truncated)", ErrFormat)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	d := &dec{b: body[len(setMagic):]}
	if v := d.u32(); v != SetVersion {
		return nil, fmt.Errorf("%w: set version %d, this package reads version %d", ErrFormat, v, SetVersion)
	}
	if crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("%w: set checksum mismatch (corrupt or truncated)", ErrFormat)
	}
	n := d.u32()
	if d.err == nil && n > len(d.b)/12 {
		return nil, fmt.Errorf("%w: %d flows in %d bytes", ErrFormat, n, len(d.b))
	}
	var set []Labeled
	for i := 0; i < n && d.err == nil; i++ {
		ll := d.u32()
		if d.err == nil && ll > maxLabel {
			return nil, fmt.Errorf("%w: entry %d: label of %d bytes", ErrFormat, i, ll)
		}
		label := string(d.take(ll))
		dim := d.u32()
		rec := d.take(d.u32())
		if d.err != nil {
			break
		}
		f, g, err := decode(bytes.NewReader(rec))
		if err != nil {
			return nil, fmt.Errorf("flows: set entry %d (%q): %w", i, label, err)
		}
		if g != nil {
			b := builders[label]
			if b == nil {
				return nil, fmt.Errorf("flows: set entry %d (%q) is a user-written flow and no Builder was given for it", i, label)
			}
			if g.n != b.Dim() || len(g.params) != b.NumParams() {
				return nil, fmt.Errorf("%w: set entry %d (%q): flow of dimension %d with %d parameters, Builder has %d and %d", ErrFormat, i, label, g.n, len(g.params), b.Dim(), b.NumParams())
			}
			if f, err = NewGraphFlow(b, g.params, g.shift, g.scale); err != nil {
				return nil, fmt.Errorf("flows: set entry %d (%q): %w", i, label, err)
			}
		}
		fd, err := flowDim(f)
		if err != nil {
			return nil, err
		}
		if fd != dim {
			return nil, fmt.Errorf("%w: set entry %d (%q) records dimension %d, its flow has %d", ErrFormat, i, label, dim, fd)
		}
		set = append(set, Labeled{Model: label, Dim: dim, Flow: f})
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrFormat, len(d.b))
	}
	return set, nil
}

// CheckSet reports an error unless set holds exactly the given models, in
// order, with the given dimensions: what a caller checks before using a
// loaded set as the transports of a TRJ run.
func CheckSet(set []Labeled, models []string, dims []int) error {
	if len(models) != len(dims) {
		return fmt.Errorf("flows: CheckSet: %d models and %d dimensions", len(models), len(dims))
	}
	if len(set) != len(models) {
		return fmt.Errorf("flows: set holds %d flows, want %d", len(set), len(models))
	}
	for i, l := range set {
		if l.Model != models[i] || l.Dim != dims[i] {
			return fmt.Errorf("flows: set entry %d is model %q of dimension %d, want %q of dimension %d", i, l.Model, l.Dim, models[i], dims[i])
		}
	}
	return nil
}

// errSeveralFlows explains a stream of several Save records.
var errSeveralFlows = errors.New("the stream holds several flows written by separate Save calls; write a set with SaveSet and read it with LoadSet")
