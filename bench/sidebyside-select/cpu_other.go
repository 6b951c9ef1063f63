//go:build !unix

package main

import "os"

// cpuSeconds is not measured on this platform.
func cpuSeconds() float64 { return 0 }

// peakRSSMiB is not measured on this platform.
func peakRSSMiB(*os.ProcessState) float64 { return 0 }
