//go:build !unix

package ad

import "testing"

// processCPU returns −1: process CPU time is read only on unix.
func processCPU(testing.TB) int64 { return -1 }
