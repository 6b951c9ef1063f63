package selection

import (
	"fmt"
	"math"
	"strings"
)

// maxQuantityRows bounds the quantities the table prints (the JSON and the
// CLI's predictions file hold them all).
const maxQuantityRows = 20

// writeCoefficients writes the model-averaged coefficients in the PIP
// table's order.
func (r *Result) writeCoefficients(b *strings.Builder, order []int, width int) {
	if len(r.Coefficients) != len(r.Names) {
		return
	}
	fmt.Fprintf(b, "\nModel-averaged coefficients (0 when the term is out; same order):\n%-*s  %10s  %9s  %10s  %10s  %9s  %12s\n",
		width, "term", "mean", "MCSE", "sd", "P(β>0|in)", "MCSE", "mean|in")
	for _, j := range order {
		c := r.Coefficients[j]
		fmt.Fprintf(b, "%-*s  %10s  %9s  %10s  %10s  %9s  %12s\n", width, c.Name, num(float64(c.Mean)), num(float64(c.MeanMCSE)),
			num(float64(c.SD)), num(float64(c.PPositive)), num(float64(c.PPositiveMCSE)), num(float64(c.MeanIfIncluded)))
	}
}

// writeQuantities writes the quantities' posteriors, the first
// maxQuantityRows of them.
func (r *Result) writeQuantities(b *strings.Builder) {
	if len(r.Quantities) == 0 {
		return
	}
	width := 8
	for _, q := range r.Quantities {
		width = max(width, len(q.Name))
	}
	fmt.Fprintf(b, "\nModel-averaged quantities:\n%-*s  %10s  %9s  %10s  %10s  %10s\n", width, "quantity", "mean", "MCSE", "sd", "2.5%", "97.5%")
	for i, q := range r.Quantities {
		if i == maxQuantityRows {
			fmt.Fprintf(b, "… and %d more (in the JSON result)\n", len(r.Quantities)-i)
			break
		}
		fmt.Fprintf(b, "%-*s  %10s  %9s  %10s  %10s  %10s\n", width, q.Name, num(float64(q.Mean)), num(float64(q.MeanMCSE)),
			num(float64(q.SD)), num(float64(q.Lower)), num(float64(q.Upper)))
	}
}

// writeWarnings ends the table with the warnings.
func (r *Result) writeWarnings(b *strings.Builder) {
	for _, w := range r.Warnings {
		b.WriteString("\nWarning: " + w + "\n")
	}
}

// num formats a table value in 4 significant digits ("—" for NaN).
func num(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.4g", v)
}
