package ad

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// lowerGather lowers gorgonia's data-movement ops (reshape, transpose,
// slice, slice-increment, concat, repeat). Rather than re-deriving each op's
// index arithmetic, the compiler runs the op's own Do once on inputs whose
// elements hold their own positions; the output then says where each element
// comes from. That map is compressed into strided runs, or into a plain view
// of the input when the op only relabels memory (reshape, contiguous slices).
func (b *builder) lowerGather(nd *gorgonia.Node, typ string, cs []*gorgonia.Node, args []int) (bool, error) {
	op := nd.Op()
	n := size(nd.Shape())

	// Which arguments carry data; the others are sizes or, for
	// slice-increment, a tensor whose values the op ignores.
	isData := make([]bool, len(cs))
	switch typ {
	case "repeatOp":
		if len(cs) < 1 {
			return false, nil
		}
		isData[0] = true
	case "sliceIncrOp":
		if len(cs) != 2 {
			return false, nil
		}
		isData[1] = true
	default:
		for i := range isData {
			isData[i] = true
		}
	}

	vals := make([]gorgonia.Value, len(cs))
	var dataArgs []int // slots of data arguments, in order
	var base []int     // first id of each data argument
	next := 1          // ids start at 1 so that 0 marks a zero output
	for i, c := range cs {
		m := size(c.Shape())
		v := make([]float64, m)
		switch {
		case isData[i]:
			if next+m >= 1<<31 {
				return false, nil
			}
			for j := range v {
				v[j] = float64(next + j)
			}
			base = append(base, next)
			dataArgs = append(dataArgs, args[i])
			next += m
		case typ == "sliceIncrOp":
			// zeros
		default:
			cv, ok := b.consts[args[i]]
			if !ok {
				return false, nil // a size that is not known at compile time
			}
			copy(v, cv)
		}
		vals[i] = makeValue(c, v)
	}

	res, err := doOp(op, vals)
	if err != nil {
		return false, nil // let the fallback path report it at run time
	}
	got, err := valueData(res, n)
	if err != nil {
		return false, nil
	}

	// Decode each output element's source.
	argOf := make([]int, n)
	srcOf := make([]int, n)
	for j, v := range got {
		if v == 0 {
			argOf[j] = -1
			continue
		}
		if v != math.Trunc(v) || v < 1 || v >= float64(next) {
			return false, nil // not pure data movement
		}
		id := int(v)
		k := len(base) - 1
		for base[k] > id {
			k--
		}
		argOf[j], srcOf[j] = k, id-base[k]
	}
	segs := segments(argOf, srcOf)

	if len(segs) == 1 && segs[0].arg >= 0 && segs[0].stride == 1 {
		b.aliasSlot(nd, dataArgs[segs[0].arg], segs[0].src, n)
		return true, nil
	}
	s := b.newSlot(nd, n)
	if in := cs[0].Shape(); typ == "transposeOp" && len(in) == 2 && len(dataArgs) == 1 && isTranspose(argOf, srcOf, in[0], in[1]) {
		b.transposes[s] = transposeOf{src: dataArgs[0], r: in[0], c: in[1]}
	}
	b.emit(nd, instr{kind: kGather, out: s, args: dataArgs, segs: segs})
	return true, nil
}

// segments compresses a gather map into maximal runs of constant stride.
func segments(argOf, srcOf []int) []segment {
	var segs []segment
	n := len(argOf)
	for j := 0; j < n; {
		sg := segment{at: j, n: 1, arg: argOf[j], src: srcOf[j], stride: 1}
		k := j + 1
		if sg.arg < 0 {
			sg.src, sg.stride = 0, 0
			for k < n && argOf[k] < 0 {
				k++
			}
		} else if k < n && argOf[k] == sg.arg {
			sg.stride = srcOf[k] - srcOf[j]
			for k < n && argOf[k] == sg.arg && srcOf[k]-srcOf[k-1] == sg.stride {
				k++
			}
		}
		sg.n = k - j
		if sg.n == 1 && sg.arg >= 0 {
			sg.stride = 1
		}
		segs = append(segs, sg)
		j = k
	}
	return segs
}

// makeValue wraps data as a gorgonia value of node c's type and shape.
// Integer nodes (indices) are stored as float64 in a Program and converted
// back here.
func makeValue(c *gorgonia.Node, data []float64) gorgonia.Value {
	if c.Dtype() == tensor.Int {
		if c.IsScalar() {
			return gorgonia.NewI(int(data[0]))
		}
		d := make([]int, len(data))
		for i, v := range data {
			d[i] = int(v)
		}
		return tensor.New(tensor.WithShape(c.Shape()...), tensor.WithBacking(d))
	}
	if c.IsScalar() {
		return gorgonia.NewF64(data[0])
	}
	return tensor.New(tensor.WithShape(c.Shape()...), tensor.WithBacking(data))
}

// zeroValue is a zero value of node c's type and shape.
func zeroValue(c *gorgonia.Node) gorgonia.Value {
	return makeValue(c, make([]float64, size(c.Shape())))
}

// doOp runs op.Do, turning panics into errors.
func doOp(op gorgonia.Op, vals []gorgonia.Value) (v gorgonia.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("panic in %v.Do: %v", op, r)
		}
	}()
	return op.Do(vals...)
}

// valueData extracts n float64s from a gorgonia value, copying.
func valueData(v gorgonia.Value, n int) ([]float64, error) {
	if v == nil {
		return nil, fmt.Errorf("nil value")
	}
	if t, ok := v.(tensor.Tensor); ok {
		v = tensor.Materialize(t)
	}
	var out []float64
	switch d := v.Data().(type) {
	case float64:
		out = []float64{d}
	case []float64:
		out = append([]float64(nil), d...)
	case bool:
		out = []float64{b2f(d)}
	case []bool:
		out = floatsOf(d, b2f)
	case int:
		out = []float64{float64(d)}
	case []int:
		out = floatsOf(d, func(x int) float64 { return float64(x) })
	default:
		return nil, fmt.Errorf("value of type %T (dtype %v), want float64", d, v.Dtype())
	}
	if len(out) != n {
		return nil, fmt.Errorf("value has %d elements, want %d", len(out), n)
	}
	return out, nil
}

// nodeValue returns the value bound to a data or constant node.
func nodeValue(nd *gorgonia.Node) ([]float64, error) {
	v := nd.Value()
	if v == nil {
		return nil, fmt.Errorf("ad: data node %q has no value: bind one (gorgonia.Let or WithValue) or pass it as a wrt node", nd.Name())
	}
	if dt := nd.Dtype(); dt != tensor.Float64 && dt != tensor.Int {
		return nil, fmt.Errorf("ad: data node %q has dtype %v, want float64 (or int for indices)", nd.Name(), dt)
	}
	d, err := valueData(v, size(nd.Shape()))
	if err != nil {
		return nil, fmt.Errorf("ad: data node %q: %w", nd.Name(), err)
	}
	return d, nil
}

// floatsOf converts each element of d with f.
func floatsOf[T any](d []T, f func(T) float64) []float64 {
	out := make([]float64, len(d))
	for i, x := range d {
		out[i] = f(x)
	}
	return out
}
