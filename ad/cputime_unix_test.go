//go:build unix

package ad

import (
	"syscall"
	"testing"
)

// processCPU returns the CPU time (user + system) used so far by this
// process in nanoseconds, or −1 if it is unavailable.
func processCPU(tb testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
