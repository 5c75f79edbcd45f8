package model

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// fake is a Provider whose attempts follow a script of outcomes.
type fake struct {
	mu     sync.Mutex
	steps  []func(ctx context.Context, emit func(Event) bool) (*Response, error)
	calls  int
	starts []time.Time
	ends   []time.Time
}

func (f *fake) Name() string { return "fake" }

func (f *fake) Attempt(ctx context.Context, req *Request, emit func(Event) bool) (*Response, error) {
	f.mu.Lock()
	i := f.calls
	f.calls++
	f.starts = append(f.starts, time.Now())
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.ends = append(f.ends, time.Now())
		f.mu.Unlock()
	}()
	if i >= len(f.steps) {
		return nil, errors.New("fake: no more steps")
	}
	return f.steps[i](ctx, emit)
}

func fails(err error) func(context.Context, func(Event) bool) (*Response, error) {
	return func(context.Context, func(Event) bool) (*Response, error) { return nil, err }
}

func answers(text string, u session.Usage) func(context.Context, func(Event) bool) (*Response, error) {
	return func(_ context.Context, emit func(Event) bool) (*Response, error) {
		var a Assembler
		for _, w := range strings.SplitAfter(text, " ") {
			if !emit(a.Text(w)) {
				return nil, context.Canceled
			}
		}
		emit(a.Usage(u))
		_, r, err := a.Finish("stop")
		return r, err
	}
}

var quick = RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

func req() *Request {
	return &Request{Messages: []session.Message{{Role: session.RoleUser, Content: "hi"}}}
}

func TestRetryThenSuccess(t *testing.T) {
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		fails(&StatusError{Status: 500, Message: "boom"}),
		fails(&net.OpError{Op: "dial", Err: errors.New("connection refused")}),
		answers("all good", session.Usage{InputTokens: 3, OutputTokens: 2}),
	}}
	m := New(f, "m1", Options{Retry: quick})
	var texts []string
	var done *Response
	for ev, err := range m.Stream(context.Background(), req()) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case EventText:
			texts = append(texts, ev.Delta)
		case EventDone:
			done = ev.Response
		}
	}
	if done == nil || done.Text != "all good" || strings.Join(texts, "") != "all good" {
		t.Fatalf("done = %+v, texts = %q", done, texts)
	}
	if len(done.Attempts) != 3 || done.Attempts[0].Status != 500 || done.Attempts[1].Status != 0 || done.Attempts[2].Status != 200 {
		t.Fatalf("attempts = %+v", done.Attempts)
	}
	if done.Attempts[0].Error == "" || done.Attempts[2].Error != "" || done.Provider != "fake" || done.Model != "m1" {
		t.Fatalf("response = %+v", done)
	}
}

func TestNoRetryOnClientError(t *testing.T) {
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		fails(&StatusError{Status: 400, Message: "bad request"}),
		answers("never", session.Usage{}),
	}}
	_, err := Generate(context.Background(), New(f, "m", Options{Retry: quick}), req())
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 400 || f.calls != 1 || len(AttemptsOf(err)) != 1 {
		t.Fatalf("err = %v, calls = %d", err, f.calls)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	wait := 30 * time.Millisecond
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		fails(&StatusError{Status: 429, RetryAfter: wait}),
		answers("ok", session.Usage{}),
	}}
	r, err := Generate(context.Background(), New(f, "m", Options{Retry: quick}), req())
	if err != nil {
		t.Fatal(err)
	}
	if got := f.starts[1].Sub(f.ends[0]); got < wait {
		t.Fatalf("retried after %s, the provider asked for %s", got, wait)
	}
	if r.Attempts[0].Status != 429 {
		t.Fatalf("attempts = %+v", r.Attempts)
	}
}

func TestRetryAfterTooLong(t *testing.T) {
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		fails(&StatusError{Status: 429, RetryAfter: time.Hour}),
	}}
	_, err := Generate(context.Background(), New(f, "m", Options{Retry: quick}), req())
	if err == nil || f.calls != 1 || !strings.Contains(err.Error(), "retry after 1h0m0s") {
		t.Fatalf("err = %v, calls = %d", err, f.calls)
	}
}

func TestDeadlineStopsRetries(t *testing.T) {
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		fails(&StatusError{Status: 503}),
		answers("late", session.Usage{}),
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	slow := RetryPolicy{MaxAttempts: 3, BaseDelay: time.Hour, MaxDelay: time.Hour}
	// The jittered wait may come out short; force a long one with Retry-After.
	f.steps[0] = fails(&StatusError{Status: 503, RetryAfter: 10 * time.Second})
	_, err := Generate(ctx, New(f, "m", Options{Retry: slow}), req())
	if err == nil || f.calls != 1 || !strings.Contains(err.Error(), "would pass the deadline") {
		t.Fatalf("err = %v, calls = %d", err, f.calls)
	}
}

func TestAttemptTimeoutIsRetried(t *testing.T) {
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		func(ctx context.Context, _ func(Event) bool) (*Response, error) { <-ctx.Done(); return nil, ctx.Err() },
		answers("second", session.Usage{}),
	}}
	p := quick
	p.AttemptTimeout = 20 * time.Millisecond
	r, err := Generate(context.Background(), New(f, "m", Options{Retry: p}), req())
	if err != nil || r.Text != "second" || !strings.Contains(r.Attempts[0].Error, "timed out") {
		t.Fatalf("r = %+v, err = %v", r, err)
	}
}

func TestStreamBrokenAfterOutputNotRetried(t *testing.T) {
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		func(_ context.Context, emit func(Event) bool) (*Response, error) {
			var a Assembler
			emit(a.Text("partial "))
			return nil, &net.OpError{Op: "read", Err: errors.New("connection reset")}
		},
		answers("again", session.Usage{}),
	}}
	var sawText bool
	var gotErr error
	for ev, err := range New(f, "m", Options{Retry: quick}).Stream(context.Background(), req()) {
		if err != nil {
			gotErr = err
			break
		}
		sawText = sawText || ev.Kind == EventText
	}
	if !sawText || !errors.Is(gotErr, ErrStreamBroken) || f.calls != 1 {
		t.Fatalf("text %v, err %v, calls %d", sawText, gotErr, f.calls)
	}
}

func TestConsumerStops(t *testing.T) {
	var emitted int
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		func(_ context.Context, emit func(Event) bool) (*Response, error) {
			var a Assembler
			for i := 0; i < 10; i++ {
				emitted++
				if !emit(a.Text("x")) {
					return nil, context.Canceled
				}
			}
			_, r, err := a.Finish("")
			return r, err
		},
	}}
	n := 0
	for range New(f, "m", Options{Retry: quick}).Stream(context.Background(), req()) {
		n++
		if n == 3 {
			break
		}
	}
	if emitted != 3 || f.calls != 1 {
		t.Fatalf("provider emitted %d events over %d calls after the consumer stopped at 3", emitted, f.calls)
	}
}

func TestSecretsRedacted(t *testing.T) {
	key := "sk-test-SECRET-0123456789"
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		fails(&StatusError{Status: 401, Message: "invalid key " + key}),
	}}
	_, err := Generate(context.Background(), New(f, "m", Options{Retry: quick, Secrets: []string{key}}), req())
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("err = %v", err)
	}
	for _, a := range AttemptsOf(err) {
		if strings.Contains(a.Error, key) {
			t.Fatalf("attempt error holds the key: %q", a.Error)
		}
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 401 {
		t.Fatalf("status error lost through redaction: %v", err)
	}
}

func TestBudgetCoversEveryCall(t *testing.T) {
	steps := make([](func(context.Context, func(Event) bool) (*Response, error)), 10)
	for i := range steps {
		steps[i] = answers("ok", session.Usage{InputTokens: 40, OutputTokens: 10})
	}
	f := &fake{steps: steps}
	m := New(f, "m", Options{Retry: quick, Price: &Price{Input: 1e6, Output: 1e6}}) // $1 a token
	b := NewBudget(Limits{Tokens: 120})
	ctx := WithBudget(context.Background(), b)
	// Two "derived" runs sharing the context: the budget is theirs together.
	for i := 0; i < 3; i++ {
		if _, err := Generate(ctx, m, req()); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err := Generate(context.WithoutCancel(ctx), m, req())
	if !errors.Is(err, ErrBudgetExceeded) || f.calls != 3 {
		t.Fatalf("err = %v after %d calls", err, f.calls)
	}
	if u := b.Used(); u.InputTokens != 120 || u.OutputTokens != 30 || u.CostUSD != 150 {
		t.Fatalf("used = %+v", u)
	}
	cost := NewBudget(Limits{CostUSD: 60})
	ctx = WithBudget(context.Background(), cost)
	if _, err := Generate(ctx, m, req()); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(ctx, m, req()); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(ctx, m, req()); !errors.Is(err, ErrBudgetExceeded) || !strings.Contains(err.Error(), "$") {
		t.Fatalf("cost budget: err = %v", err)
	}
}

func TestWallBudget(t *testing.T) {
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		func(ctx context.Context, _ func(Event) bool) (*Response, error) { <-ctx.Done(); return nil, ctx.Err() },
	}}
	b := NewBudget(Limits{Wall: 30 * time.Millisecond})
	_, err := Generate(WithBudget(context.Background(), b), New(f, "m", Options{Retry: quick}), req())
	if !errors.Is(err, ErrBudgetExceeded) || !strings.Contains(err.Error(), "wall time") {
		t.Fatalf("err = %v", err)
	}
}

func TestPriceCost(t *testing.T) {
	p := Price{Input: 2, Output: 10, CacheRead: 0.5}
	got := p.Cost(session.Usage{InputTokens: 1_000_000, CacheReadTokens: 500_000, CacheWriteTokens: 100_000, OutputTokens: 100_000})
	want := 0.4*2 + 0.5*0.5 + 0.1*2 + 0.1*10
	if diff := got - want; diff > 1e-9 || diff < -1e-9 {
		t.Fatalf("cost = %v, want %v", got, want)
	}
}

func TestUsageAloneIsNotOutput(t *testing.T) {
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		func(_ context.Context, emit func(Event) bool) (*Response, error) {
			var a Assembler
			emit(a.Usage(session.Usage{InputTokens: 9}))
			return nil, &StatusError{Status: 529, Message: "overloaded"}
		},
		answers("ok", session.Usage{InputTokens: 9, OutputTokens: 1}),
	}}
	r, err := Generate(context.Background(), New(f, "m", Options{Retry: quick}), req())
	if err != nil || r.Text != "ok" || len(r.Attempts) != 2 || r.Attempts[0].Status != 529 {
		t.Fatalf("r = %+v, err = %v", r, err)
	}
}
