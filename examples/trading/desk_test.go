package trading

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

func TestRiskCheckRefuses(t *testing.T) {
	b := seedBook()
	for _, c := range []struct {
		o    Order
		want string
	}{
		{Order{Symbol: "ACME", Side: "buy", Quantity: 50, Type: "market"}, "exceeds the $5000.00 cap"},
		{Order{Symbol: "GLOBX", Side: "buy", Quantity: 50, Type: "limit", Limit: 40}, "above the 60-share limit"},
		{Order{Symbol: "GLOBX", Side: "sell", Quantity: 16, Type: "market"}, "would go short"},
	} {
		l := seedLedger()
		before := marshal(l)
		_, err := l.Place(b, c.o)
		var te *tool.Error
		if !errors.As(err, &te) || te.Kind != session.ToolErrPolicy || !strings.Contains(te.Message, c.want) {
			t.Errorf("%+v: %v, want a policy refusal saying %q", c.o, err, c.want)
		}
		if !bytes.Equal(marshal(l), before) {
			t.Errorf("%+v: a refused order changed the ledger", c.o)
		}
	}
	// A limit bid below the ask rests open, holding cash.
	l := seedLedger()
	o, err := l.Place(b, Order{Symbol: "GLOBX", Side: "buy", Quantity: 10, Type: "limit", Limit: 44})
	if err != nil || o.Status != StatusOpen || o.ID != "ord-2" || l.reserved() != 820+440 {
		t.Fatalf("resting bid: %+v, %v, reserved %v", o, err, l.reserved())
	}
}

func TestValidatorsJudgeTheLedger(t *testing.T) {
	if ok, why, _ := checkRisk(Expected()); !ok {
		t.Fatalf("expected ledger rejected: %s", why)
	}
	bad := Expected()
	bad.Orders = append(bad.Orders, Order{ID: "ord-9", Symbol: "ACME", Side: "buy", Quantity: 60, Type: "market", Status: StatusFilled, Price: 100.5})
	bad.Positions["ACME"] = 109
	ok, why, _ := checkRisk(bad)
	if ok || !strings.Contains(why, "ACME position 109 is outside 0..60") || !strings.Contains(why, "order ord-9 filled $6030.00") {
		t.Fatalf("risk check of a bad ledger: %v %s", ok, why)
	}
}
