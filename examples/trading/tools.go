package trading

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// The domain tools work on the ledger and the book in the session's
// workspace. The ones that change the ledger declare a write of
// ledger.json, so the agent records each call's diff of it: the state
// delta, next to the call that caused it.

// BalanceArgs are get_balance's arguments: none.
type BalanceArgs struct{}

// Balance is get_balance's result.
type Balance struct {
	Account    string         `json:"account"`
	Cash       float64        `json:"cash"`
	Available  float64        `json:"available_cash"`
	Positions  map[string]int `json:"positions"`
	OpenOrders []Order        `json:"open_orders"`
}

// QuoteArgs are get_quote's arguments.
type QuoteArgs struct {
	Symbol string `json:"symbol" jsonschema:"the ticker, such as ACME"`
}

// QuoteResult is get_quote's result.
type QuoteResult struct {
	Symbol string `json:"symbol"`
	Quote
}

// PlaceArgs are place_order's arguments.
type PlaceArgs struct {
	Symbol     string  `json:"symbol" jsonschema:"the ticker"`
	Side       string  `json:"side" jsonschema:"buy or sell"`
	Quantity   int     `json:"quantity" jsonschema:"number of shares"`
	Type       string  `json:"type" jsonschema:"market or limit"`
	LimitPrice float64 `json:"limit_price,omitempty" jsonschema:"the limit price of a limit order"`
}

// CancelArgs are cancel_order's arguments.
type CancelArgs struct {
	OrderID string `json:"order_id" jsonschema:"the id of an open order, such as ord-1"`
}

// Change is the result of a call that changed the ledger: the order as
// recorded and the cash and position before and after.
type Change struct {
	Order          Order   `json:"order"`
	CashBefore     float64 `json:"cash_before"`
	CashAfter      float64 `json:"cash_after"`
	PositionBefore int     `json:"position_before"`
	PositionAfter  int     `json:"position_after"`
}

// Tools returns the four domain tools.
func Tools() []tool.Tool {
	return []tool.Tool{getBalance(), getQuote(), placeOrder(), cancelOrder()}
}

func getBalance() tool.Tool {
	return must(tool.FuncWith("get_balance", "Show the customer's cash, cash not held by open orders, positions and open orders.",
		func(ctx context.Context, env tool.Env, _ BalanceArgs) (Balance, error) {
			l, err := readLedger(ctx, env.Sandbox)
			if err != nil {
				return Balance{}, err
			}
			b := Balance{Account: l.Account, Cash: l.Cash, Available: cents(l.Cash - l.reserved()), Positions: l.Positions, OpenOrders: []Order{}}
			for _, o := range l.Orders {
				if o.Status == StatusOpen {
					b.OpenOrders = append(b.OpenOrders, o)
				}
			}
			return b, nil
		},
		tool.WithResources(func(BalanceArgs) []tool.Resource { return []tool.Resource{tool.PathRead(LedgerFile)} }),
		tool.Idempotent[BalanceArgs]()))
}

func getQuote() tool.Tool {
	return must(tool.FuncWith("get_quote", "Show a symbol's best bid and ask.",
		func(ctx context.Context, env tool.Env, a QuoteArgs) (QuoteResult, error) {
			b, err := readBook(ctx, env.Sandbox)
			if err != nil {
				return QuoteResult{}, err
			}
			sym := strings.ToUpper(a.Symbol)
			q, ok := b[sym]
			if !ok {
				return QuoteResult{}, tool.Errorf(session.ToolErrExecution, nil, fmt.Sprintf("no quote for symbol %q", a.Symbol))
			}
			return QuoteResult{Symbol: sym, Quote: q}, nil
		},
		tool.WithResources(func(QuoteArgs) []tool.Resource { return []tool.Resource{tool.PathRead(BookFile)} }),
		tool.Idempotent[QuoteArgs]()))
}

func placeOrder() tool.Tool {
	return must(tool.FuncWith("place_order", "Place a market or limit order; the desk's risk check may refuse it.",
		func(ctx context.Context, env tool.Env, a PlaceArgs) (Change, error) {
			b, err := readBook(ctx, env.Sandbox)
			if err != nil {
				return Change{}, err
			}
			return change(ctx, env.Sandbox, strings.ToUpper(a.Symbol), func(l *Ledger) (Order, error) {
				return l.Place(b, Order{Symbol: strings.ToUpper(a.Symbol), Side: a.Side, Quantity: a.Quantity, Type: a.Type, Limit: a.LimitPrice})
			})
		},
		tool.WithResources(func(PlaceArgs) []tool.Resource {
			return []tool.Resource{tool.PathWrite(LedgerFile), tool.PathRead(BookFile)}
		})))
}

func cancelOrder() tool.Tool {
	return must(tool.FuncWith("cancel_order", "Cancel an open order.",
		func(ctx context.Context, env tool.Env, a CancelArgs) (Change, error) {
			l, err := readLedger(ctx, env.Sandbox)
			if err != nil {
				return Change{}, err
			}
			sym := ""
			for _, o := range l.Orders {
				if o.ID == a.OrderID {
					sym = o.Symbol
				}
			}
			return change(ctx, env.Sandbox, sym, func(l *Ledger) (Order, error) { return l.Cancel(a.OrderID) })
		},
		tool.WithResources(func(CancelArgs) []tool.Resource { return []tool.Resource{tool.PathWrite(LedgerFile)} })))
}

// change applies fn to the workspace's ledger and writes it back if fn
// succeeds; the result states the delta for symbol.
func change(ctx context.Context, sb sandbox.Sandbox, symbol string, fn func(*Ledger) (Order, error)) (Change, error) {
	l, err := readLedger(ctx, sb)
	if err != nil {
		return Change{}, err
	}
	c := Change{CashBefore: l.Cash, PositionBefore: l.Positions[symbol]}
	if c.Order, err = fn(&l); err != nil {
		return Change{}, err
	}
	if err := sb.WriteFile(ctx, LedgerFile, marshal(l)); err != nil {
		return Change{}, fmt.Errorf("write %s: %w", LedgerFile, err)
	}
	c.CashAfter, c.PositionAfter = l.Cash, l.Positions[symbol]
	return c, nil
}

func readLedger(ctx context.Context, sb sandbox.Sandbox) (Ledger, error) {
	var l Ledger
	err := readJSON(ctx, sb, LedgerFile, &l)
	return l, err
}

func readBook(ctx context.Context, sb sandbox.Sandbox) (Book, error) {
	var b Book
	err := readJSON(ctx, sb, BookFile, &b)
	return b, err
}

func readJSON(ctx context.Context, sb sandbox.Sandbox, path string, v any) error {
	if sb == nil {
		return tool.ErrNoSandbox
	}
	data, err := sb.ReadFile(ctx, path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

func must(t tool.Tool, err error) tool.Tool {
	if err != nil {
		panic(err) // the argument types are this package's own
	}
	return tool.InSandbox(t)
}
