package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/openrath/rath/store/sqlite"
)

// A workload is one row of the table (two with its peak RSS), measured on
// both sides, or on ours only when setup gives no eino trial.
type workload struct {
	key   string // for -only
	name  string
	unit  string
	rss   bool // also report the peak RSS
	setup func(ctx context.Context, dir string) (sides, error)
}

// sides are a workload's trials, ready to run, and what to close after.
type sides struct {
	eino, ours trial
	close      func() error
}

func noClose() error { return nil }

// workloads are the workloads at sizes z.
func workloads(z sizes) []workload {
	ws := []workload{
		{key: "short", unit: "µs/step", name: fmt.Sprintf("%d runs × %d steps, in memory", z.shortRuns, z.shortCalls),
			setup: inMemory(script{calls: z.shortCalls}, z.shortRuns)},
		{key: "long", unit: "µs/step", name: fmt.Sprintf("1 run × %d steps, in memory", z.longCalls),
			setup: inMemory(script{calls: z.longCalls}, 1)},
		{key: "durable", unit: "µs/step", name: fmt.Sprintf("%d runs × %d steps, durable step", z.durableRuns, z.shortCalls),
			setup: durableStep(script{calls: z.shortCalls}, z.durableRuns)},
	}
	fs := script{calls: z.fanoutCalls, latency: z.latency}
	for _, n := range z.fanouts {
		ws = append(ws, workload{key: "fanout", unit: "wall s", rss: true,
			name:  fmt.Sprintf("fan-out %d × %d @ %v, in memory", n, fs.steps(), fs.latency),
			setup: fanoutInMemory(fs, n)})
	}
	return append(ws, workload{key: "fanout-durable", unit: "wall s", rss: true,
		name:  fmt.Sprintf("fan-out %d × %d @ %v, SQLite sync", z.durableFanout, fs.steps(), fs.latency),
		setup: fanoutDurable(fs, z.durableFanout)})
}

// inMemory: n runs of s in a row per round, nothing stored.
func inMemory(s script, n int) func(context.Context, string) (sides, error) {
	return func(ctx context.Context, _ string) (sides, error) {
		e, o, err := memoryRunners(ctx, s)
		if err != nil {
			return sides{}, err
		}
		return sides{eino: perStep(e, s, n), ours: perStep(o, s, n), close: noClose}, nil
	}
}

// fanoutInMemory: n concurrent runs of s, nothing stored.
func fanoutInMemory(s script, n int) func(context.Context, string) (sides, error) {
	return func(ctx context.Context, _ string) (sides, error) {
		e, o, err := memoryRunners(ctx, s)
		if err != nil {
			return sides{}, err
		}
		return sides{eino: fanout(e, n), ours: fanout(o, n), close: noClose}, nil
	}
}

// memoryRunners are both sides' warmed-up runners of s in memory.
func memoryRunners(ctx context.Context, s script) (eino, ours runner, err error) {
	if eino, err = einoAgent(ctx, s, new(tally)); err != nil {
		return nil, nil, err
	}
	a, err := oursAgent(s, new(tally), nil, false)
	if err != nil {
		return nil, nil, err
	}
	ours = oursRunner(a)
	return eino, ours, warm(ctx, eino, ours)
}

// durableStep: n runs of s in a row per round, ours committing every step
// to SQLite (sync) once (the no-op tool is marked idempotent), Eino
// checkpointing every step in memory.
func durableStep(s script, n int) func(context.Context, string) (sides, error) {
	return func(ctx context.Context, dir string) (sides, error) {
		e, err := einoCheckpointed(ctx, s, new(tally), newCheckPoints())
		if err != nil {
			return sides{}, err
		}
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "step.db")})
		if err != nil {
			return sides{}, fmt.Errorf("open store: %w", err)
		}
		a, err := oursAgent(s, new(tally), st, true)
		if err != nil {
			return sides{}, closing(st.Close, err)
		}
		o := oursRunner(a)
		if err := warm(ctx, e, o); err != nil {
			return sides{}, closing(st.Close, err)
		}
		return sides{eino: perStep(e, s, n), ours: perStep(o, s, n), close: st.Close}, nil
	}
}

// fanoutDurable: n concurrent runs of s, ours only, every step committed to
// SQLite (sync), twice (the tool is not marked idempotent), as in the agent
// package's BenchmarkFanout.
func fanoutDurable(s script, n int) func(context.Context, string) (sides, error) {
	return func(ctx context.Context, dir string) (sides, error) {
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "fanout.db")})
		if err != nil {
			return sides{}, fmt.Errorf("open store: %w", err)
		}
		a, err := oursAgent(s, new(tally), st, false)
		if err != nil {
			return sides{}, closing(st.Close, err)
		}
		o := oursRunner(a)
		if err := warm(ctx, o); err != nil {
			return sides{}, closing(st.Close, err)
		}
		return sides{ours: fanout(o, n), close: st.Close}, nil
	}
}

// closing closes what was opened before err and returns err.
func closing(close func() error, err error) error {
	if cerr := close(); cerr != nil {
		return fmt.Errorf("%w (and closing: %w)", err, cerr)
	}
	return err
}
