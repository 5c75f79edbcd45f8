package main

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// sample is one round's figures of one side: the workload's value (wall
// time), the process's CPU time in the same unit, and, for a fan-out, the
// peak RSS while it ran.
type sample struct{ value, cpu, rssMiB float64 }

// A trial measures one side of a workload once.
type trial func(ctx context.Context) (sample, error)

// perStep is a trial of n runs of s one after another; its value is the
// time per step (model call), in µs.
func perStep(run runner, s script, n int) trial {
	return func(ctx context.Context) (sample, error) {
		runtime.GC()
		c0 := cpuTime()
		d, err := sequential(ctx, run, n)
		if err != nil {
			return sample{}, err
		}
		c := cpuTime() - c0
		per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(n*s.steps()) }
		return sample{value: per(d), cpu: per(c)}, nil
	}
}

// fanout is a trial starting n runs at once; its value is the wall time in
// seconds, and it records the peak RSS from its start.
func fanout(run runner, n int) trial {
	return func(ctx context.Context) (sample, error) {
		if err := resetPeakRSS(); err != nil {
			return sample{}, err
		}
		c0 := cpuTime()
		d, err := concurrent(ctx, run, n)
		if err != nil {
			return sample{}, err
		}
		c := cpuTime() - c0
		rss, err := peakRSSMiB()
		if err != nil {
			return sample{}, err
		}
		return sample{value: d.Seconds(), cpu: c.Seconds(), rssMiB: rss}, nil
	}
}

// warm does one untimed run with each runner.
func warm(ctx context.Context, runs ...runner) error {
	for _, run := range runs {
		if err := check(run(ctx, "warm-up")); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	return nil
}
