package customtool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// The offline model's two calls: the first with a string principal and
// made-up property names, the second as the schema says.
const (
	badArgs  = `{"principal":"$10,000","rate":4.5,"years":10,"compounding":"monthly"}`
	goodArgs = `{"principal":10000,"rate_percent":4.5,"years":10,"compounds_per_year":12}`
)

// offline reacts to the latest tool result: none yet, an
// invalid_arguments error, or the calculator's answer.
func offline(_ context.Context, req *model.Request) (model.Response, error) {
	var last *session.Message
	for i, m := range req.Messages {
		if m.Role == session.RoleTool {
			last = &req.Messages[i]
		}
	}
	switch {
	case last == nil:
		return model.Response{Text: "Let me calculate that.",
			ToolCalls: []session.ToolCall{session.NewToolCall("calc-1", "compound_interest", badArgs)}}, nil
	case strings.Contains(last.Content, `"error":"invalid_arguments"`):
		return model.Response{Text: "The principal has to be a plain number, and the schema calls the rate rate_percent; calling it again.",
			ToolCalls: []session.ToolCall{session.NewToolCall("calc-2", "compound_interest", goodArgs)}}, nil
	}
	var r InterestResult
	if err := json.Unmarshal([]byte(last.Content), &r); err != nil {
		return model.Response{Text: "The calculator failed: " + last.Content}, nil
	}
	return model.Response{Text: fmt.Sprintf("After 10 years you will have %s, of which %s is interest "+
		"(4.5%% a year, compounded monthly).", dollars(r.FinalAmount), dollars(r.Interest))}, nil
}

// dollars formats an amount as $12,345.67.
func dollars(x float64) string {
	s := fmt.Sprintf("%.2f", x)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return "$" + b.String() + "." + frac
}
