package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// sequential does n runs one after another and returns the elapsed time.
func sequential(ctx context.Context, run runner, n int) (time.Duration, error) {
	t0 := time.Now()
	for i := range n {
		if err := check(run(ctx, fmt.Sprint("task ", i))); err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

// concurrent starts n runs at once and returns the wall time until the
// last one ends.
func concurrent(ctx context.Context, run runner, n int) (time.Duration, error) {
	errs := make([]error, n)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		wg.Go(func() { errs[i] = check(run(ctx, fmt.Sprint("task ", i))) })
	}
	wg.Wait()
	d := time.Since(t0)
	for i, err := range errs {
		if err != nil {
			return 0, fmt.Errorf("run %d of %d: %w", i, n, err)
		}
	}
	return d, nil
}

// check fails a run that did not end with the final answer.
func check(got string, err error) error {
	if err != nil {
		return err
	}
	if got != finalAnswer {
		return fmt.Errorf("the run answered %q, not %q", got, finalAnswer)
	}
	return nil
}
