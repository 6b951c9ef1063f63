package ad

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Slices of one node merged by gorgonia.
//
// gorgonia v0.9.18 merges nodes with equal hashes (ExprGraph.AddNode), and
// its slice op hashes its start, end and step as single bytes (sliceOp's
// WriteHash writes byte(op.Start()), …); its equality test (nodeEq) compares
// those same hashes. So x[s:e] and x[s+256k:e+256k] are one node: the second
// call of gorgonia.Slice returns the first slice, and the model is silently
// wrong. The same holds for the slices gorgonia.Grad takes of the gradient
// of a Concat, one per piece at its offset.
//
// ops.Slice and ops.Concat hash their bounds in full and are lowered exactly
// like gorgonia's (through Mover). For graphs that call gorgonia's own,
// Compile refuses every gorgonia slice that could have absorbed another,
// one whose bounds shifted by a multiple of 256 still lie within the axis
// (the merged node keeps no trace of the second call, so the refusal
// cannot be finer), and every gorgonia Concat with two pieces whose
// gradient slices would merge.

// hashBound is the number of distinct values gorgonia's slice hash keeps
// of each bound.
const hashBound = 256

// Mover is implemented by custom ops that only move data with the meaning
// of one of gorgonia's data-movement ops, so that Compile lowers them as it
// lowers that op: a view of the input for a contiguous slice, a strided
// copy otherwise, and for the gradients of many slices of one tensor one
// scatter into a single buffer. The compiler learns where each element goes
// by running the op's Do once on position-coded inputs, so Do defines the
// op. ops.Slice and ops.Concat are such ops.
type Mover interface {
	gorgonia.Op
	// Moves says which of gorgonia's ops this op behaves as.
	Moves() Movement
}

// Movement names the gorgonia data-movement op that a Mover behaves as.
type Movement uint8

// The movements a Mover may declare.
const (
	// MoveSlice: one input; every output element is an input element.
	MoveSlice Movement = iota + 1
	// MoveSliceGrad: two inputs x and g, the gradient of a slice; the
	// output has x's shape, is zero except for g's elements added at the
	// slice's positions, and does not depend on x's values.
	MoveSliceGrad
	// MoveConcat: every output element is an element of one of the inputs.
	MoveConcat
)

// moverType is the gorgonia op type whose lowering a Mover shares.
func moverType(m Movement) string {
	switch m {
	case MoveSlice:
		return "sliceOp"
	case MoveSliceGrad:
		return "sliceIncrOp"
	case MoveConcat:
		return "concatOp"
	}
	return ""
}

// checkSliceHashes refuses the gorgonia slices and concatenations among
// the ancestors of roots whose nodes gorgonia may have merged (see above).
// It runs before gorgonia.Grad, on the graph the user built.
func checkSliceHashes(g *gorgonia.ExprGraph, roots []*gorgonia.Node) error {
	seen := make(map[*gorgonia.Node]bool)
	stack := append([]*gorgonia.Node(nil), roots...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == nil || seen[n] {
			continue
		}
		seen[n] = true
		cs := children(g, n)
		stack = append(stack, cs...)
		if n.Op() == nil {
			continue
		}
		var err error
		switch gorgoniaType(n.Op()) {
		case "sliceOp":
			err = checkGorgoniaSlice(n, cs)
		case "concatOp":
			err = checkGorgoniaConcat(n, cs)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkGorgoniaSlice refuses a gorgonia slice [s, e) of an axis of length
// n that another slice of the same node could have been merged with:
// [s−256k, e−256k) or [s+256k, e+256k) lies within the axis (s ≥ 256 or
// e + 256 ≤ n). The merged node keeps the bounds of whichever call came
// first, so both orders are caught; a slice with no such partner is exact.
func checkGorgoniaSlice(n *gorgonia.Node, cs []*gorgonia.Node) error {
	along := opField(n.Op(), "along")
	sl, ok := n.Op().(interface{ IsSlice() tensor.Slice })
	if len(cs) != 1 || !along.IsValid() || !ok {
		return nil
	}
	a, in, r := int(along.Int()), cs[0].Shape(), sl.IsSlice()
	if a < 0 || a >= len(in) || r == nil || r.End() <= r.Start() {
		return nil // the whole axis
	}
	if r.Start() < hashBound && r.End()+hashBound > in[a] {
		return nil
	}
	return fmt.Errorf("ad: node %q is the slice %d:%d of %q (shape %v) along axis %d by gorgonia.Slice, "+
		"whose hash keeps each bound modulo %d (gorgonia v0.9.18): slices %d elements apart are merged "+
		"into one node, so the density may be wrong; slice with ops.Slice instead",
		n.Name(), r.Start(), r.End(), cs[0].Name(), in, a, hashBound, hashBound)
}

// checkGorgoniaConcat refuses a gorgonia Concat whose gradient gorgonia
// would take as slices that merge: two pieces of one shape at offsets a
// multiple of hashBound apart along the axis.
func checkGorgoniaConcat(n *gorgonia.Node, cs []*gorgonia.Node) error {
	axisV := opField(n.Op(), "axis")
	if !axisV.IsValid() {
		return nil
	}
	axis := int(axisV.Int())
	type key struct {
		shape string
		off   int
	}
	first := make(map[key]int)
	off := 0
	for i, c := range cs {
		s := c.Shape()
		if axis < 0 || axis >= len(s) {
			return nil
		}
		k := key{shapeKey(s), off % hashBound}
		if j, ok := first[k]; ok {
			return fmt.Errorf("ad: node %q concatenates %q and %q (shape %v) at offsets %d apart along axis %d "+
				"with gorgonia.Concat, whose gradient slices by a hash that keeps each bound modulo %d "+
				"(gorgonia v0.9.18): the two gradients would be merged and be wrong; concatenate with ops.Concat instead",
				n.Name(), cs[j].Name(), c.Name(), s, off-offsetOf(cs, j, axis), axis, hashBound)
		}
		first[k] = i
		off += s[axis]
	}
	return nil
}

// offsetOf is the offset of piece j of a concatenation along axis.
func offsetOf(cs []*gorgonia.Node, j, axis int) int {
	off := 0
	for _, c := range cs[:j] {
		off += c.Shape()[axis]
	}
	return off
}

// shapeKey is a map key for a shape.
func shapeKey(s tensor.Shape) string { return fmt.Sprint([]int(s)) }
