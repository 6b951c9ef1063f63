//go:build !unix

package bench

import "math"

// cpuSeconds is not measured on this platform: the CPU-time metrics
// report NaN.
func cpuSeconds() float64 { return math.NaN() }
