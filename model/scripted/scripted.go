// Package scripted is a deterministic model for tests, examples and offline
// demos. It answers from a script and streams its answers the way a real
// provider does: text in word-sized deltas, tool-call arguments in small
// pieces, usage, then the finished response.
package scripted

import (
	"context"
	"fmt"
	"sync"

	"github.com/openrath/rath/model"
)

// New returns a model that replies with rs in order, one per call, then
// fails every further call with model.ErrExhausted.
func New(rs ...model.Response) model.Model {
	s := &script{rs: rs}
	return Func(s.next)
}

// Func returns a model whose answers come from fn. An error fn returns
// fails the call (a *model.StatusError is reported like an HTTP error).
// Calls are not retried; wrap a Provider with model.New for that.
func Func(fn func(ctx context.Context, req *model.Request) (model.Response, error)) model.Model {
	return model.New(&Provider{Fn: fn}, "scripted", model.Options{Retry: model.RetryPolicy{MaxAttempts: 1}})
}

type script struct {
	mu sync.Mutex
	rs []model.Response
	n  int
}

func (s *script) next(context.Context, *model.Request) (model.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n >= len(s.rs) {
		return model.Response{}, fmt.Errorf("%w: all %d scripted responses were used; call %d has none", model.ErrExhausted, len(s.rs), s.n+1)
	}
	s.n++
	return s.rs[s.n-1], nil
}
