package trading

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

// seen is what the offline trader has learnt from its tool results so far.
type seen struct {
	balance, finalBalance *Balance
	quote                 *QuoteResult
	cancelled             *Change
	refused               string // the refusal of an order, if any
	filled                *Change
}

// offlineModel is the trader's scripted model. It acts on what its tool
// results say, as a live model would: it looks up the account and the
// quote, cancels the open GLOBX bid, places the customer's order as asked
// (which the risk check refuses), places the largest order within the cap,
// checks the balance and reports.
func offlineModel() model.Model {
	return scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
		var k seen
		last := 0
		for i, m := range req.Messages {
			if m.Role == session.RoleUser {
				last = i
			}
		}
		for _, m := range req.Messages[last+1:] {
			if m.Role == session.RoleTool {
				k.read(m)
			}
		}
		switch {
		case k.balance == nil:
			return respond(req, "Let me look up your account and the ACME quote.",
				session.NewToolCall("t1-balance", "get_balance", `{}`),
				session.NewToolCall("t1-quote", "get_quote", `{"symbol":"ACME"}`)), nil
		case k.cancelled == nil:
			id := ""
			for _, o := range k.balance.OpenOrders {
				if o.Symbol == "GLOBX" && o.Side == "buy" {
					id = o.ID
				}
			}
			if id == "" {
				return respond(req, "You have no open GLOBX bid to cancel."), nil
			}
			return respond(req, fmt.Sprintf("Your open GLOBX bid is %s; cancelling it first.", id),
				session.NewToolCall("t2-cancel", "cancel_order", fmt.Sprintf(`{"order_id":%q}`, id))), nil
		case k.filled == nil && k.refused == "":
			return respond(req, "Now the ACME order as you asked: 120 shares at market.",
				session.NewToolCall("t3-order", "place_order", `{"symbol":"ACME","side":"buy","quantity":120,"type":"market"}`)), nil
		case k.filled == nil:
			qty := min(int(MaxNotional/k.quote.Ask), MaxPosition-k.balance.Positions["ACME"])
			why := strings.TrimSuffix(strings.TrimPrefix(k.refused, "risk check refused the order: "), "; nothing was placed")
			return respond(req, fmt.Sprintf("The risk check refused 120 shares: %s. The largest single order within the cap at $%.2f is %d shares; placing that instead.",
				why, k.quote.Ask, qty),
				session.NewToolCall("t4-order", "place_order", fmt.Sprintf(`{"symbol":"ACME","side":"buy","quantity":%d,"type":"market"}`, qty))), nil
		case k.finalBalance == nil:
			return respond(req, "Filled. Checking your balance.", session.NewToolCall("t5-balance", "get_balance", `{}`)), nil
		}
		f, b := k.filled, k.finalBalance
		return respond(req, fmt.Sprintf("Done. I cancelled your GLOBX bid %s. Your order for 120 ACME was above the desk's $%.0f limit per order, "+
			"so I bought %d ACME at $%.2f instead (order %s, $%.2f). You now hold %d ACME and %d GLOBX, with $%.2f in cash. "+
			"The %d-share position limit leaves room for %d more ACME in a separate order, if you want them.",
			k.cancelled.Order.ID, MaxNotional, f.Order.Quantity, f.Order.Price, f.Order.ID, float64(f.Order.Quantity)*f.Order.Price,
			b.Positions["ACME"], b.Positions["GLOBX"], b.Cash, MaxPosition, MaxPosition-b.Positions["ACME"])), nil
	})
}

// read takes in one tool result.
func (k *seen) read(m session.Message) {
	var fail struct{ Error, Message string }
	failed := json.Unmarshal([]byte(m.Content), &fail) == nil && fail.Error != ""
	switch m.Name {
	case "get_balance":
		var b Balance
		if !failed && json.Unmarshal([]byte(m.Content), &b) == nil {
			if k.balance == nil {
				k.balance = &b
			} else if k.filled != nil {
				k.finalBalance = &b
			}
		}
	case "get_quote":
		var q QuoteResult
		if !failed && json.Unmarshal([]byte(m.Content), &q) == nil {
			k.quote = &q
		}
	case "cancel_order":
		var c Change
		if !failed && json.Unmarshal([]byte(m.Content), &c) == nil {
			k.cancelled = &c
		}
	case "place_order":
		var c Change
		switch {
		case failed:
			k.refused = fail.Message
		case json.Unmarshal([]byte(m.Content), &c) == nil && c.Order.Status == StatusFilled:
			k.filled = &c
		}
	}
}

// respond is a scripted answer of this example's model.
func respond(req *model.Request, text string, calls ...session.ToolCall) model.Response {
	return exmodel.Respond(req, "scripted-trader", text, calls...)
}
