package model

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/openrath/rath/session"
)

// Limits bound a Budget; zero fields are unlimited.
type Limits struct {
	// Tokens bounds input + output tokens (cache reads included in input).
	Tokens int64
	// CostUSD bounds the priced cost of the calls.
	CostUSD float64
	// Wall bounds the time from NewBudget.
	Wall time.Duration
}

// Budget is spent by every model call made with a context carrying it: put
// it in the context of a run and it covers the session and everything
// derived from it in that run — all agents, branches and loops — not one
// loop. It is safe for concurrent use.
type Budget struct {
	limits Limits
	start  time.Time

	mu   sync.Mutex
	used session.Usage
}

// NewBudget starts a budget now.
func NewBudget(l Limits) *Budget { return &Budget{limits: l, start: time.Now()} }

type budgetKey struct{}

// WithBudget returns ctx carrying b.
func WithBudget(ctx context.Context, b *Budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// BudgetFrom returns the budget ctx carries, or nil.
func BudgetFrom(ctx context.Context) *Budget {
	b, _ := ctx.Value(budgetKey{}).(*Budget)
	return b
}

// Limits returns the budget's limits.
func (b *Budget) Limits() Limits { return b.limits }

// Used returns what the calls have spent so far.
func (b *Budget) Used() session.Usage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Deadline is when the wall-time budget ends (ok false if unbounded).
func (b *Budget) Deadline() (time.Time, bool) {
	if b.limits.Wall <= 0 {
		return time.Time{}, false
	}
	return b.start.Add(b.limits.Wall), true
}

// Check returns ErrBudgetExceeded (wrapped, saying which limit) if any limit
// is reached.
func (b *Budget) Check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.checkLocked()
}

func (b *Budget) checkLocked() error {
	l, u := b.limits, b.used
	switch {
	case l.Tokens > 0 && u.InputTokens+u.OutputTokens >= l.Tokens:
		return fmt.Errorf("%w: %d of %d tokens used", ErrBudgetExceeded, u.InputTokens+u.OutputTokens, l.Tokens)
	case l.CostUSD > 0 && u.CostUSD >= l.CostUSD:
		return fmt.Errorf("%w: $%.4f of $%.4f spent", ErrBudgetExceeded, u.CostUSD, l.CostUSD)
	case l.Wall > 0 && time.Since(b.start) >= l.Wall:
		return fmt.Errorf("%w: wall time %s elapsed", ErrBudgetExceeded, l.Wall)
	}
	return nil
}

// Charge adds a call's usage. The call that crosses a limit still returns
// its answer; the next Check fails.
func (b *Budget) Charge(u session.Usage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used = b.used.Add(u)
}
