package flows

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/trjgo/trj/internal/scalar"
)

// File format (little-endian): the 8-byte magic "TRJFLOW\n", a uint32
// format version, a uint32 kind, the kind's payload, and a CRC-32 (IEEE) of
// everything before it. Payloads store dimensions as uint32, reals as
// float64 bits and booleans as bytes.

var magic = [8]byte{'T', 'R', 'J', 'F', 'L', 'O', 'W', '\n'}

// FormatVersion is the version of the saved-flow format this package writes
// and reads.
const FormatVersion = 1

const (
	kindAffine      = 1
	kindRQMA        = 2
	kindConditional = 3
	kindGraph       = 4
)

// maxFileSize bounds what Load reads, so a corrupt length cannot exhaust
// memory.
const maxFileSize = 1 << 31

// ErrFormat is returned (wrapped) by Load for a file that is not a valid
// saved flow: wrong magic, unknown version or kind, truncated, failing its
// checksum, or with inconsistent contents.
var ErrFormat = errors.New("flows: invalid flow file")

type enc struct{ b bytes.Buffer }

func (e *enc) u32(v int) { _ = binary.Write(&e.b, binary.LittleEndian, uint32(v)) }
func (e *enc) f64(v ...float64) {
	for _, x := range v {
		_ = binary.Write(&e.b, binary.LittleEndian, math.Float64bits(x))
	}
}

// Flow is a flow that Save writes: *Affine, *RQMA, *ConditionalRQMA or
// *GraphFlow. Its methods are unexported because the file format knows
// exactly these kinds.
type Flow interface {
	// savedDim is the dimension the flow acts on (the saturated dimension
	// of a conditional flow).
	savedDim() int
	// encode writes the flow's kind and payload.
	encode(e *enc)
}

// Save writes f to w.
func Save(w io.Writer, f Flow) error {
	if isNilFlow(f) {
		return fmt.Errorf("flows: cannot save a nil %T", f)
	}
	var e enc
	e.b.Write(magic[:])
	e.u32(FormatVersion)
	f.encode(&e)
	_ = binary.Write(&e.b, binary.LittleEndian, crc32.ChecksumIEEE(e.b.Bytes()))
	_, err := w.Write(e.b.Bytes())
	return err
}

func (a *Affine) savedDim() int { return a.Dim() }

func (a *Affine) encode(e *enc) {
	e.u32(kindAffine)
	e.u32(len(a.mean))
	e.f64(a.mean...)
	e.f64(a.l.Data...)
}

func (f *RQMA) savedDim() int { return f.Dim() }

func (f *RQMA) encode(e *enc) {
	e.u32(kindRQMA)
	e.u32(f.net.n)
	e.config(f.cfg)
	e.standardisedParams(f.shift, f.scale, f.params)
}

func (f *ConditionalRQMA) savedDim() int { return f.MaxDim() }

func (f *ConditionalRQMA) encode(e *enc) {
	e.u32(kindConditional)
	e.u32(f.net.n)
	e.config(f.cfg)
	e.u32(len(f.spec.Contexts))
	e.u32(f.net.ctx)
	for k := range f.spec.Contexts {
		e.f64(f.spec.Contexts[k]...)
		for _, a := range f.spec.Active[k] {
			if a {
				e.b.WriteByte(1)
			} else {
				e.b.WriteByte(0)
			}
		}
	}
	e.standardisedParams(f.shift, f.scale, f.params)
}

func (f *GraphFlow) savedDim() int { return f.Dim() }

func (f *GraphFlow) encode(e *enc) {
	e.u32(kindGraph)
	e.u32(f.b.Dim())
	e.standardisedParams(f.shift, f.scale, f.params)
}

// standardisedParams writes the standardisation and the parameter vector
// that end every trained flow's payload.
func (e *enc) standardisedParams(shift, scale, params []float64) {
	e.f64(shift...)
	e.f64(scale...)
	e.u32(len(params))
	e.f64(params...)
}

func (e *enc) config(c RQMAConfig) {
	e.u32(c.Layers)
	e.u32(c.Bins)
	e.u32(c.HiddenPerDim)
	e.f64(c.sigmoidScale())
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = fmt.Errorf("%w: truncated", ErrFormat)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) u32() int {
	v := d.take(4)
	if v == nil {
		return 0
	}
	return int(binary.LittleEndian.Uint32(v))
}

// dim reads a dimension and checks it against limit, so a corrupt value
// fails before any allocation.
func (d *dec) dim(limit int) int {
	v := d.u32()
	if d.err == nil && (v < 1 || v > limit) {
		d.err = fmt.Errorf("%w: dimension %d out of range [1, %d]", ErrFormat, v, limit)
	}
	return v
}

func (d *dec) f64s(n int) []float64 {
	if d.err != nil {
		return nil
	}
	raw := d.take(8 * n)
	if raw == nil {
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	if !scalar.AllFinite(out) {
		d.err = fmt.Errorf("%w: non-finite value", ErrFormat)
	}
	return out
}

func (d *dec) config() RQMAConfig {
	var c RQMAConfig
	c.Layers = d.dim(1000)
	c.Bins = d.dim(100)
	c.HiddenPerDim = d.dim(1 << 16)
	if s := d.f64s(1); s != nil {
		c.SigmoidScale = s[0]
	}
	return c
}

// fits reports whether the parameters of an architecture could be stored in
// the rest of the file, computed in floating point so that corrupt
// dimensions can neither overflow nor trigger a huge allocation.
func (d *dec) fits(n int, cfg RQMAConfig, ctx, extra int) bool {
	h := float64(n) * float64(cfg.HiddenPerDim)
	out := float64(n) * float64(3*cfg.Bins+1)
	per := h*float64(n) + h + h*h + h + out*h + out + 2*h*float64(ctx)
	total := float64(cfg.Layers)*per + float64(extra)
	if d.err == nil && 8*total > float64(len(d.b)) {
		d.err = fmt.Errorf("%w: truncated or inconsistent architecture", ErrFormat)
	}
	return d.err == nil
}

// Load reads a flow written by Save: an *Affine, *RQMA or
// *ConditionalRQMA (a user-written flow needs its Builder: LoadGraph).
func Load(r io.Reader) (Flow, error) {
	f, g, err := decode(r)
	if err != nil {
		return nil, err
	}
	if g != nil {
		return nil, fmt.Errorf("%w: the file holds a user-written flow; load it with LoadGraph and its Builder", ErrFormat)
	}
	return f, nil
}

// isNilFlow reports whether f is nil or a nil pointer of a flow type.
func isNilFlow(f Flow) bool {
	switch f := f.(type) {
	case nil:
		return true
	case *Affine:
		return f == nil
	case *RQMA:
		return f == nil
	case *ConditionalRQMA:
		return f == nil
	case *GraphFlow:
		return f == nil
	}
	return false
}

// graphRecord is a user-written flow as read from a file, before its
// Builder is known.
type graphRecord struct {
	n                    int
	shift, scale, params []float64
}

// LoadGraph reads a user-written flow saved by Save and rebuilds it with b,
// which must have the saved dimension and number of parameters.
func LoadGraph(r io.Reader, b Builder) (*GraphFlow, error) {
	if b == nil {
		return nil, errors.New("flows: nil Builder")
	}
	f, g, err := decode(r)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, fmt.Errorf("%w: file holds a %T, not a user-written flow", ErrFormat, f)
	}
	if g.n != b.Dim() || len(g.params) != b.NumParams() {
		return nil, fmt.Errorf("%w: flow of dimension %d with %d parameters, Builder has %d and %d", ErrFormat, g.n, len(g.params), b.Dim(), b.NumParams())
	}
	return NewGraphFlow(b, g.params, g.shift, g.scale)
}

// maxDim bounds a saved flow's dimension.
const maxDim = 1 << 12

// decode reads any single-flow file: a flow of this package, or (g non-nil)
// the record of a user-written flow, which needs its Builder.
func decode(r io.Reader) (f Flow, g *graphRecord, err error) {
	d, err := openRecord(r)
	if err != nil {
		return nil, nil, err
	}
	switch kind := d.u32(); kind {
	case kindAffine:
		f, err = d.affine()
	case kindRQMA:
		f, err = d.rqma()
	case kindConditional:
		f, err = d.conditional()
	case kindGraph:
		g, err = d.graph()
	default:
		return nil, nil, fmt.Errorf("%w: unknown kind %d", ErrFormat, kind)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(d.b) != 0 {
		return nil, nil, fmt.Errorf("%w: %d trailing bytes", ErrFormat, len(d.b))
	}
	return f, g, nil
}

// openRecord reads a single-flow file, checks its size, magic, version and
// checksum, and returns a decoder at its kind.
func openRecord(r io.Reader) (*dec, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrFormat, maxFileSize)
	}
	if len(data) < len(magic)+12 {
		return nil, fmt.Errorf("%w: truncated (%d bytes)", ErrFormat, len(data))
	}
	if bytes.Equal(data[:len(setMagic)], setMagic[:]) {
		return nil, fmt.Errorf("%w: the file holds a set of flows written by SaveSet; read it with LoadSet", ErrFormat)
	}
	if !bytes.Equal(data[:len(magic)], magic[:]) {
		return nil, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	// The version comes before the checksum, so that a file of another
	// format version fails naming its version.
	if v := binary.LittleEndian.Uint32(data[len(magic):]); v != FormatVersion {
		return nil, fmt.Errorf("%w: version %d, this package reads %d", ErrFormat, v, FormatVersion)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		// A second record after a complete first one: several Save calls
		// into one stream.
		if i := bytes.Index(data[len(magic):], magic[:]); i >= 4 {
			end := len(magic) + i
			if crc32.ChecksumIEEE(data[:end-4]) == binary.LittleEndian.Uint32(data[end-4:end]) {
				return nil, fmt.Errorf("%w: %w", ErrFormat, errSeveralFlows)
			}
		}
		return nil, fmt.Errorf("%w: checksum mismatch (corrupt or truncated)", ErrFormat)
	}
	d := &dec{b: body[len(magic):]}
	if v := d.u32(); v != FormatVersion {
		return nil, fmt.Errorf("%w: version %d, this package reads %d", ErrFormat, v, FormatVersion)
	}
	return d, nil
}

func (d *dec) affine() (*Affine, error) {
	n := d.dim(maxDim)
	mean := d.f64s(n)
	l := d.f64s(n * n)
	if d.err != nil {
		return nil, d.err
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if l[i*n+j] != 0 {
				return nil, fmt.Errorf("%w: Cholesky factor not lower triangular", ErrFormat)
			}
		}
	}
	a, err := affineFromFactor(mean, l)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return a, nil
}

func (d *dec) rqma() (*RQMA, error) {
	n := d.dim(maxDim)
	cfg := d.config()
	shift, scale := d.f64s(n), d.f64s(n)
	if err := d.architecture(n, cfg, 0, 0); err != nil {
		return nil, err
	}
	g, err := NewRQMA(shift, scale, cfg, 0)
	if err := d.finish(err, func() error { return d.params(g.params, g.net) }); err != nil {
		return nil, err
	}
	return g, nil
}

// finish ends the decoding of a flow: err, its constructor's error, is a
// format error; else params reads the flow's parameters.
func (d *dec) finish(err error, params func() error) error {
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return params()
}

func (d *dec) conditional() (*ConditionalRQMA, error) {
	n := d.dim(maxDim)
	cfg := d.config()
	K := d.dim(1 << 16)
	c := d.dim(1 << 16)
	spec := ConditionalSpec{}
	for k := 0; k < K && d.err == nil; k++ {
		spec.Contexts = append(spec.Contexts, d.f64s(c))
		raw := d.take(n)
		act := make([]bool, len(raw))
		for i, b := range raw {
			if b > 1 {
				d.err = fmt.Errorf("%w: bad activity flag", ErrFormat)
			}
			act[i] = b == 1
		}
		spec.Active = append(spec.Active, act)
	}
	shift, scale := d.f64s(n), d.f64s(n)
	if err := d.architecture(n, cfg, c, baseSize(n, c)); err != nil {
		return nil, err
	}
	g, err := NewConditionalRQMA(spec, shift, scale, cfg, 0)
	if err := d.finish(err, func() error { return d.params(g.params, g.net) }); err != nil {
		return nil, err
	}
	return g, nil
}

func (d *dec) graph() (*graphRecord, error) {
	n := d.dim(maxDim)
	shift, scale := d.f64s(n), d.f64s(n)
	np := d.u32()
	if d.err == nil && 8*np > len(d.b) {
		d.err = fmt.Errorf("%w: truncated", ErrFormat)
	}
	p := d.f64s(np)
	if d.err != nil {
		return nil, d.err
	}
	return &graphRecord{n: n, shift: shift, scale: scale, params: p}, nil
}

// architecture checks what was read so far, the configuration of a flow of
// dimension n, and that its parameters (ctx context inputs, extra further
// parameters) fit in the rest of the file.
func (d *dec) architecture(n int, cfg RQMAConfig, ctx, extra int) error {
	if d.err != nil {
		return d.err
	}
	if err := cfg.validate(n); err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if !d.fits(n, cfg, ctx, extra) {
		return d.err
	}
	return nil
}

// params reads a flow's parameter count and values into dst, which must
// have the stored count, and checks that the masked weights of net are
// zero.
func (d *dec) params(dst []float64, net *stack) error {
	if np := d.u32(); d.err == nil && np != len(dst) {
		return fmt.Errorf("%w: %d parameters, architecture has %d", ErrFormat, np, len(dst))
	}
	p := d.f64s(len(dst))
	if d.err != nil {
		return d.err
	}
	if !net.masksRespected(p[:net.numParams()]) {
		return fmt.Errorf("%w: masked weights are not zero", ErrFormat)
	}
	copy(dst, p)
	return nil
}

// LoadRQMA reads a flow written by Save and fails unless it is an RQMA.
func LoadRQMA(r io.Reader) (*RQMA, error) { return loadAs[*RQMA](r, "an RQMA flow") }

// LoadAffine reads a flow written by Save and fails unless it is affine.
func LoadAffine(r io.Reader) (*Affine, error) { return loadAs[*Affine](r, "an affine flow") }

// LoadConditionalRQMA reads a flow written by Save and fails unless it is a
// conditional RQMA flow.
func LoadConditionalRQMA(r io.Reader) (*ConditionalRQMA, error) {
	return loadAs[*ConditionalRQMA](r, "a conditional flow")
}

// loadAs is Load followed by a check that the file holds a flow of type T.
func loadAs[T any](r io.Reader, what string) (T, error) {
	var zero T
	f, err := Load(r)
	if err != nil {
		return zero, err
	}
	g, ok := f.(T)
	if !ok {
		return zero, fmt.Errorf("%w: file holds a %T, not %s", ErrFormat, f, what)
	}
	return g, nil
}
