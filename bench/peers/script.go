package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// finalAnswer is what every scripted model says when it stops calling tools.
const finalAnswer = "done"

// script is the work of one run, the same on both sides: the model asks for
// one no-op tool call per turn, calls times, then gives the final answer; it
// answers each request after latency (zero: at once).
type script struct {
	calls   int
	latency time.Duration
}

// steps is the number of model calls of one run (calls, then the answer).
func (s script) steps() int { return s.calls + 1 }

// next is the model's decision for a request whose last message answers
// the tool call with id answered ("" if it answers none): the id of the
// tool call to make, or ok false for the final answer. A call's id carries
// its turn ("c0", "c1", …), so the model knows where its run is without
// scanning the conversation or holding per-run state.
func (s script) next(answered string) (id string, ok bool) {
	turn := 0
	if k, found := strings.CutPrefix(answered, "c"); found {
		if n, err := strconv.Atoi(k); err == nil {
			turn = n + 1
		}
	}
	if turn >= s.calls {
		return "", false
	}
	return "c" + strconv.Itoa(turn), true
}

// wait sleeps for the script's latency, or until ctx ends.
func (s script) wait(ctx context.Context) error {
	if s.latency <= 0 {
		return nil
	}
	t := time.NewTimer(s.latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("scripted model: %w", ctx.Err())
	}
}

// tally counts what the runs of one side did, across goroutines.
type tally struct {
	model atomic.Int64 // model calls
	tool  atomic.Int64 // tool calls
}

// runner does one run of a script for a user's task and returns the final
// answer.
type runner func(ctx context.Context, task string) (string, error)
