//go:build !unix

package storetest

import "time"

// processCPU is not measured here; the benchmarks then leave out their CPU
// figures.
func processCPU() time.Duration { return 0 }
