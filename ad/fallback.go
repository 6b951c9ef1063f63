package ad

import (
	"fmt"

	"gorgonia.org/gorgonia"
)

// fallback runs an op the compiler cannot lower through its gorgonia Do.
// It allocates on every call; Program.Fallbacks lists such ops so users can
// see what is slow.
type fallback struct {
	op     gorgonia.Op
	inputs []*gorgonia.Node // argument nodes, for their types and shapes
}

func (b *builder) lowerFallback(nd *gorgonia.Node, cs []*gorgonia.Node, args []int) error {
	s := b.newSlot(nd, size(nd.Shape()))
	name := fmt.Sprint(nd.Op())
	b.emit(nd, instr{kind: kFallback, out: s, args: args,
		fb: &fallback{op: nd.Op(), inputs: cs}, name: name})
	return nil
}

func (f *fallback) eval(out []float64, s [][]float64, args []int) error {
	vals := make([]gorgonia.Value, len(args))
	for i, a := range args {
		// Copy: Do may keep or overwrite its inputs.
		vals[i] = makeValue(f.inputs[i], append([]float64(nil), s[a]...))
	}
	v, err := doOp(f.op, vals)
	if err != nil {
		return fmt.Errorf("ad: fallback %v: %w", f.op, err)
	}
	d, err := valueData(v, len(out))
	if err != nil {
		return fmt.Errorf("ad: fallback %v: %w", f.op, err)
	}
	copy(out, d)
	return nil
}
