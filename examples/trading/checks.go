package trading

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// The validators' names.
const (
	RiskCheck    = "risk-limits"
	OutcomeCheck = "task-outcome"
)

// Expected is the ledger a correct run ends with, computed by applying
// the reference actions to the seed, as tau-bench computes its goal state:
// the GLOBX bid cancelled, and the largest ACME buy within the limits
// (the customer's 120 shares would break the notional cap).
func Expected() Ledger {
	l, b := seedLedger(), seedBook()
	if _, err := l.Cancel("ord-1"); err != nil {
		panic(err) // the seed has ord-1 open
	}
	qty := min(int(MaxNotional/b["ACME"].Ask), MaxPosition-l.Positions["ACME"])
	if _, err := l.Place(b, Order{Symbol: "ACME", Side: "buy", Quantity: qty, Type: "market"}); err != nil {
		panic(err) // within the limits by construction
	}
	return l
}

// validators returns the risk check and the outcome check, both reading
// the final ledger from the session's workspace.
func validators(pool *sandbox.Pool) (risk, outcome *flow.Validator) {
	risk = flow.Validate(RiskCheck, func(ctx context.Context, s *session.Session) (bool, string, error) {
		l, err := finalLedger(ctx, pool, s)
		if err != nil {
			return false, "", err
		}
		return checkRisk(l)
	})
	outcome = flow.Validate(OutcomeCheck, func(ctx context.Context, s *session.Session) (bool, string, error) {
		l, err := finalLedger(ctx, pool, s)
		if err != nil {
			return false, "", err
		}
		want := Expected()
		if bytes.Equal(marshal(l), marshal(want)) {
			return true, fmt.Sprintf("the final ledger equals the expected state: cash $%.2f, %s; %s", l.Cash, positions(l), orders(l)), nil
		}
		return false, fmt.Sprintf("the final ledger differs from the expected state: got cash $%.2f, %s, %s; want cash $%.2f, %s, %s",
			l.Cash, positions(l), orders(l), want.Cash, positions(want), orders(want)), nil
	})
	return risk, outcome
}

// checkRisk checks the desk's limits on a ledger.
func checkRisk(l Ledger) (bool, string, error) {
	var bad []string
	if l.Cash < 0 {
		bad = append(bad, fmt.Sprintf("cash is negative ($%.2f)", l.Cash))
	}
	for sym, n := range l.Positions {
		if n < 0 || n > MaxPosition {
			bad = append(bad, fmt.Sprintf("%s position %d is outside 0..%d", sym, n, MaxPosition))
		}
	}
	largest := 0.0
	for _, o := range l.Orders {
		if o.Status != StatusFilled {
			continue
		}
		n := float64(o.Quantity) * o.Price
		largest = math.Max(largest, n)
		if n > MaxNotional {
			bad = append(bad, fmt.Sprintf("order %s filled $%.2f, above the $%.2f cap", o.ID, n, MaxNotional))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return false, strings.Join(bad, "; "), nil
	}
	return true, fmt.Sprintf("cash $%.2f >= 0; %s, each within 0..%d; largest fill $%.2f <= $%.2f cap",
		l.Cash, positions(l), MaxPosition, largest, MaxNotional), nil
}

// finalLedger reads the ledger from s's workspace.
func finalLedger(ctx context.Context, pool *sandbox.Pool, s *session.Session) (Ledger, error) {
	lease, _, err := pool.Acquire(ctx, s)
	if err != nil {
		return Ledger{}, fmt.Errorf("trading: the workspace: %w", err)
	}
	defer lease.Release()
	return readLedger(ctx, lease)
}

// positions lists a ledger's positions by symbol.
func positions(l Ledger) string {
	syms := make([]string, 0, len(l.Positions))
	for s := range l.Positions {
		syms = append(syms, s)
	}
	sort.Strings(syms)
	var b strings.Builder
	for i, s := range syms {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", s, l.Positions[s])
	}
	return b.String()
}

// orders lists a ledger's orders with their statuses.
func orders(l Ledger) string {
	var parts []string
	for _, o := range l.Orders {
		parts = append(parts, fmt.Sprintf("%s %s %d %s %s", o.ID, o.Side, o.Quantity, o.Symbol, o.Status))
	}
	return "orders " + strings.Join(parts, ", ")
}
