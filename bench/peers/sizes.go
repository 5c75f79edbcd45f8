package main

import "time"

// sizes scale the workloads.
type sizes struct {
	shortRuns     int   // runs per round of the short workload
	shortCalls    int   // tool calls per short run
	longCalls     int   // tool calls of the long run
	durableRuns   int   // runs per round of the durable-step workload
	fanouts       []int // concurrent runs of the in-memory fan-outs
	durableFanout int   // concurrent runs of the durable fan-out
	fanoutCalls   int   // tool calls per fan-out run (then the answer)
	latency       time.Duration
}

// fullSizes are the workloads as specified.
func fullSizes() sizes {
	return sizes{
		shortRuns: 200, shortCalls: 10,
		longCalls:   1000,
		durableRuns: 30,
		fanouts:     []int{2000, 10000}, durableFanout: 10000,
		fanoutCalls: 4, latency: 20 * time.Millisecond,
	}
}

// quickSizes are a smoke run: every workload, a tenth of the size or less.
func quickSizes() sizes {
	return sizes{
		shortRuns: 20, shortCalls: 10,
		longCalls:   100,
		durableRuns: 5,
		fanouts:     []int{200, 1000}, durableFanout: 1000,
		fanoutCalls: 4, latency: 20 * time.Millisecond,
	}
}
