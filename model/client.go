package model

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"time"

	"github.com/openrath/rath/session"
)

// Options configure New.
type Options struct {
	Retry RetryPolicy
	// Price, when set, prices usage the provider did not price itself.
	Price *Price
	// Secrets are redacted from every error (the API key).
	Secrets []string
	// OnAttempt, if set, hears about every attempt as it ends.
	OnAttempt func(session.Attempt)
}

// New wraps p as the model called name.
func New(p Provider, name string, opts Options) Model {
	return &client{p: p, name: name, opts: opts, retry: opts.Retry.orDefault()}
}

type client struct {
	p     Provider
	name  string
	opts  Options
	retry RetryPolicy
}

func (c *client) Provider() string { return c.p.Name() }
func (c *client) Name() string     { return c.name }

func (c *client) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		resp, stopped, err := c.call(ctx, req, yield)
		if stopped {
			return
		}
		if err != nil {
			yield(Event{}, err)
			return
		}
		yield(Event{Kind: EventDone, Response: resp}, nil)
	}
}

// call runs the attempts. stopped reports that the consumer stopped
// listening (nothing more may be yielded).
func (c *client) call(ctx context.Context, req *Request, yield func(Event, error) bool) (resp *Response, stopped bool, err error) {
	start := time.Now()
	r := *req
	if r.Model == "" {
		r.Model = c.name
	}
	fail := func(attempts []session.Attempt, err error) error {
		return &CallError{Provider: c.p.Name(), Model: r.Model, Attempts: attempts, Err: redactError(err, c.opts.Secrets...)}
	}
	b := BudgetFrom(ctx)
	if b != nil {
		if err := b.Check(); err != nil {
			return nil, false, fail(nil, err)
		}
		if dl, ok := b.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl)
			defer cancel()
		}
	}
	var rng *rand.Rand // made on the first retry: most calls need none
	var attempts []session.Attempt
	for n := 1; ; n++ {
		resp, yielded, stopped, err := c.attempt(ctx, &r, yield)
		a := session.Attempt{Latency: resp.latency}
		if err != nil {
			a.Error = Redact(err.Error(), c.opts.Secrets...)
			var se *StatusError
			if errors.As(err, &se) {
				a.Status = se.Status
			}
		} else {
			a.Status = 200
		}
		attempts = append(attempts, a)
		if c.opts.OnAttempt != nil {
			c.opts.OnAttempt(a)
		}
		if stopped {
			return nil, true, nil
		}
		if err == nil {
			out := resp.r
			out.Provider = c.p.Name()
			if out.Model == "" {
				out.Model = r.Model
			}
			out.Attempts = attempts
			out.Latency = time.Since(start)
			if out.Usage.CostUSD == 0 && c.opts.Price != nil {
				out.Usage.CostUSD = c.opts.Price.Cost(out.Usage)
			}
			if b != nil {
				b.Charge(out.Usage)
			}
			return out, false, nil
		}
		if b != nil && ctx.Err() != nil {
			if berr := b.Check(); berr != nil {
				return nil, false, fail(attempts, berr)
			}
		}
		if yielded {
			return nil, false, fail(attempts, fmt.Errorf("%w: %w", ErrStreamBroken, err))
		}
		if n >= c.retry.MaxAttempts || !Retryable(err) || ctx.Err() != nil {
			return nil, false, fail(attempts, err)
		}
		if rng == nil {
			rng = rand.New(rand.NewPCG(uint64(start.UnixNano()), 0x5eed))
		}
		wait := c.retry.backoff(n, rng)
		var se *StatusError
		if errors.As(err, &se) && se.RetryAfter > 0 {
			if se.RetryAfter > c.retry.MaxRetryAfter {
				return nil, false, fail(attempts, fmt.Errorf("%w (the provider asked to retry after %s)", err, se.RetryAfter))
			}
			wait = se.RetryAfter
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, false, fail(attempts, fmt.Errorf("%w (the next retry, in %s, would pass the deadline)", err, wait))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false, fail(attempts, fmt.Errorf("%w (while waiting to retry: %w)", err, ctx.Err()))
		case <-t.C:
		}
	}
}

type attemptResult struct {
	r       *Response
	latency time.Duration
}

// attempt runs one try, passing its events on.
func (c *client) attempt(ctx context.Context, req *Request, yield func(Event, error) bool) (res attemptResult, yielded, stopped bool, err error) {
	actx := ctx
	if c.retry.AttemptTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.retry.AttemptTimeout)
		defer cancel()
	}
	t0 := time.Now()
	resp, err := c.p.Attempt(actx, req, func(ev Event) bool {
		// Usage is not output: an attempt that failed after reporting only
		// usage may still be retried (the next attempt's usage replaces it).
		yielded = yielded || ev.Kind != EventUsage
		if !yield(ev, nil) {
			stopped = true
			return false
		}
		return true
	})
	res.latency = time.Since(t0)
	if err == nil && resp == nil {
		err = fmt.Errorf("%w: the provider returned no response", ErrMalformed)
	}
	if err != nil && !stopped && ctx.Err() == nil && actx.Err() != nil {
		err = fmt.Errorf("attempt timed out after %s: %w", c.retry.AttemptTimeout, context.DeadlineExceeded)
	}
	res.r = resp
	return res, yielded, stopped, err
}
