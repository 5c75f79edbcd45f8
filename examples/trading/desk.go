package trading

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// The desk's risk limits.
const (
	// MaxNotional caps one order's quantity times price, in dollars.
	MaxNotional = 5000.0
	// MaxPosition caps the shares held of one symbol.
	MaxPosition = 60
)

// Where the simulated state lives in the workspace.
const (
	LedgerFile = "ledger.json"
	BookFile   = "book.json"
)

// Order statuses.
const (
	StatusOpen      = "open"
	StatusFilled    = "filled"
	StatusCancelled = "cancelled"
)

// Order is one order of the ledger.
type Order struct {
	ID       string  `json:"id"`
	Symbol   string  `json:"symbol"`
	Side     string  `json:"side"` // buy or sell
	Quantity int     `json:"quantity"`
	Type     string  `json:"type"`            // market or limit
	Limit    float64 `json:"limit,omitempty"` // limit orders' price
	Status   string  `json:"status"`
	// Price is the fill price of a filled order.
	Price float64 `json:"price,omitempty"`
}

// Ledger is the customer's account: cash, positions and orders.
type Ledger struct {
	Account   string         `json:"account"`
	Cash      float64        `json:"cash"`
	Positions map[string]int `json:"positions"`
	Orders    []Order        `json:"orders"`
	NextOrder int            `json:"next_order"`
}

// Quote is one symbol's top of book.
type Quote struct {
	Bid float64 `json:"bid"`
	Ask float64 `json:"ask"`
}

// Book is the order book's quotes by symbol.
type Book map[string]Quote

// seedLedger is every run's starting account: some GLOBX, no ACME, and a
// resting GLOBX bid the customer wants gone.
func seedLedger() Ledger {
	return Ledger{
		Account:   "ACC-1042",
		Cash:      10000,
		Positions: map[string]int{"ACME": 0, "GLOBX": 15},
		Orders:    []Order{{ID: "ord-1", Symbol: "GLOBX", Side: "buy", Quantity: 20, Type: "limit", Limit: 41, Status: StatusOpen}},
		NextOrder: 2,
	}
}

// seedBook is the order book every run trades against.
func seedBook() Book {
	return Book{"ACME": {Bid: 100.25, Ask: 100.50}, "GLOBX": {Bid: 44.90, Ask: 45.10}}
}

// reserved is the cash held by open buy orders.
func (l Ledger) reserved() float64 {
	r := 0.0
	for _, o := range l.Orders {
		if o.Status == StatusOpen && o.Side == "buy" {
			r += float64(o.Quantity) * o.Limit
		}
	}
	return r
}

// refuse is a risk-check refusal: an error result of kind policy, so the
// model sees why and nothing is changed.
func refuse(format string, a ...any) error {
	return tool.Errorf(session.ToolErrPolicy, nil, "risk check refused the order: "+fmt.Sprintf(format, a...)+"; nothing was placed")
}

// Place checks an order against the desk's limits and applies it to l:
// a market order (or a marketable limit order) fills at the touch, another
// limit order rests open. It returns the order as recorded.
func (l *Ledger) Place(b Book, o Order) (Order, error) {
	q, ok := b[o.Symbol]
	switch {
	case !ok:
		return o, tool.Errorf(session.ToolErrExecution, nil, fmt.Sprintf("no quote for symbol %q", o.Symbol))
	case o.Quantity <= 0:
		return o, tool.Errorf(session.ToolErrInvalidArgs, nil, "quantity must be positive")
	case o.Side != "buy" && o.Side != "sell":
		return o, tool.Errorf(session.ToolErrInvalidArgs, nil, "side must be buy or sell")
	case o.Type == "limit" && o.Limit <= 0:
		return o, tool.Errorf(session.ToolErrInvalidArgs, nil, "a limit order needs a positive limit_price")
	case o.Type != "market" && o.Type != "limit":
		return o, tool.Errorf(session.ToolErrInvalidArgs, nil, "type must be market or limit")
	}
	price := q.Ask
	if o.Side == "sell" {
		price = q.Bid
	}
	fills := o.Type == "market" || (o.Side == "buy" && o.Limit >= q.Ask) || (o.Side == "sell" && o.Limit <= q.Bid)
	if !fills {
		price = o.Limit
	}
	notional := float64(o.Quantity) * price
	pos := l.Positions[o.Symbol]
	switch {
	case notional > MaxNotional:
		return o, refuse("notional $%.2f (%d x $%.2f) exceeds the $%.2f cap per order", notional, o.Quantity, price, MaxNotional)
	case o.Side == "buy" && pos+o.Quantity > MaxPosition:
		return o, refuse("the %s position would be %d shares, above the %d-share limit", o.Symbol, pos+o.Quantity, MaxPosition)
	case o.Side == "buy" && notional > l.Cash-l.reserved():
		return o, refuse("notional $%.2f exceeds the $%.2f of cash not held by open orders", notional, l.Cash-l.reserved())
	case o.Side == "sell" && o.Quantity > pos:
		return o, refuse("selling %d %s would go short: the position is %d", o.Quantity, o.Symbol, pos)
	}
	o.ID = fmt.Sprintf("ord-%d", l.NextOrder)
	l.NextOrder++
	o.Status = StatusOpen
	if fills {
		o.Status, o.Price = StatusFilled, price
		if o.Side == "buy" {
			l.Cash, l.Positions[o.Symbol] = cents(l.Cash-notional), pos+o.Quantity
		} else {
			l.Cash, l.Positions[o.Symbol] = cents(l.Cash+notional), pos-o.Quantity
		}
	}
	l.Orders = append(l.Orders, o)
	return o, nil
}

// Cancel cancels the open order id.
func (l *Ledger) Cancel(id string) (Order, error) {
	for i, o := range l.Orders {
		if o.ID != id {
			continue
		}
		if o.Status != StatusOpen {
			return o, tool.Errorf(session.ToolErrExecution, nil, fmt.Sprintf("order %s is %s, not open", id, o.Status))
		}
		l.Orders[i].Status = StatusCancelled
		return l.Orders[i], nil
	}
	return Order{}, tool.Errorf(session.ToolErrExecution, nil, fmt.Sprintf("no order %s", id))
}

// cents rounds to the cent.
func cents(x float64) float64 { return math.Round(x*100) / 100 }

// marshal is the workspace form of a state file.
func marshal(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // ledgers and books always encode
	}
	return append(b, '\n')
}

// digest is the sha256 of a state file, as workspace effects name it.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
