package rqspline_test

import (
	"fmt"

	"github.com/trjgo/trj/internal/rqspline"
)

// Evaluate a 3-bin spline, invert it and take the gradient of its output
// with respect to the input and the parameters.
func Example() {
	uw := []float64{0.5, -0.2, 1}      // bin widths, unnormalised
	uh := []float64{-1, 0.3, 0.2}      // bin heights, unnormalised
	ud := []float64{0.1, 2, -0.5, 0.4} // knot derivatives, unnormalised
	if err := rqspline.Validate(uw, uh, ud); err != nil {
		fmt.Println(err)
		return
	}
	y, ld := rqspline.Forward(0.6, uw, uh, ud)
	x, _ := rqspline.Inverse(y, uw, uh, ud)
	guw, guh, gud := make([]float64, 3), make([]float64, 3), make([]float64, 4)
	dx := rqspline.ForwardVJP(0.6, uw, uh, ud, 1, 0, guw, guh, gud)
	fmt.Printf("y = %.6f, log f'(x) = %.6f, inverse %.6f, dy/dx = %.6f\n", y, ld, x, dx)
	// Output: y = 0.655884, log f'(x) = -0.395535, inverse 0.600000, dy/dx = 0.673320
}
