//go:build unix

package bench

import (
	"math"
	"syscall"
)

// cpuSeconds is the process's user plus system CPU time in seconds. On a
// shared machine wall time also counts the time spent waiting for a core;
// CPU time does not, so it is the steadier figure under load.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
