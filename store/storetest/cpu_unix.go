//go:build unix

package storetest

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process has used. On a
// shared machine it moves far less than wall time with other processes'
// load, so the benchmarks report it beside their rates.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
