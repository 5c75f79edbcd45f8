package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/tool"
)

// The small workflow this example records, replays, changes and forks:
// a calculator agent computes an invoice's VAT with a tool, then a writer
// agent drafts the reply to the customer.

// Question is the recorded run's input.
const Question = "Invoice 2026-118 is 2340.00 EUR before VAT. What is the VAT at 19%, and the total?"

// Reply prompts: the writer's instructions as recorded, and as changed for
// the fork.
const (
	ReplyPrompt       = "You write the reply to the customer: two short sentences with the VAT and the total."
	GermanReplyPrompt = "You write the reply to the customer in German: two short sentences with the VAT and the total."
)

// version is one version of the invoice workflow's code.
type version struct {
	calc, write model.Model
	round       bool   // the VAT tool rounds to whole euros (the changed code)
	reply       string // the writer's instructions
	runs        *atomic.Int64
	st          store.Store
	pool        *sandbox.Pool
}

// invoice builds version v of the workflow.
func invoice(v version) (flow.Module, error) {
	vat, err := vatTool(v.round, v.runs)
	if err != nil {
		return nil, err
	}
	calc, err := agent.New(agent.Config{Name: "calculator", Model: v.calc, Tools: []tool.Tool{vat},
		Instructions: "You compute VAT with the vat tool and state the VAT and the total.",
		Store:        v.st, Sandboxes: v.pool})
	if err != nil {
		return nil, fmt.Errorf("replay example: %w", err)
	}
	write, err := agent.New(agent.Config{Name: "writer", Model: v.write, Instructions: v.reply, Store: v.st, Sandboxes: v.pool})
	if err != nil {
		return nil, fmt.Errorf("replay example: %w", err)
	}
	return flow.Sequential(flow.Named("calculate", calc), flow.Named("reply", write)), nil
}

// vatArgs are the vat tool's arguments.
type vatArgs struct {
	Net     float64 `json:"net" jsonschema:"the net amount"`
	RatePct float64 `json:"rate_pct" jsonschema:"the VAT rate in percent"`
}

// vatTool computes VAT and total to the cent — or, in the changed
// version, rounds the VAT to whole euros. runs counts its executions.
func vatTool(round bool, runs *atomic.Int64) (tool.Tool, error) {
	return tool.FuncWith("vat", "Compute the VAT on a net amount and the total.",
		func(_ context.Context, _ tool.Env, a vatArgs) (string, error) {
			if runs != nil {
				runs.Add(1)
			}
			vat := math.Round(a.Net*a.RatePct) / 100
			if round {
				vat = math.Round(vat)
			}
			return fmt.Sprintf(`{"vat":"%.2f","total":"%.2f"}`, vat, a.Net+vat), nil
		},
		tool.Idempotent[vatArgs]())
}

// calculate is the scripted calculator: the tool first, then the figures
// it returned.
func calculate(_ context.Context, req *model.Request) (model.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role != session.RoleTool {
		return respond(req, "", session.NewToolCall("vat_1", "vat", `{"net":2340,"rate_pct":19}`)), nil
	}
	var r struct{ VAT, Total string }
	if err := json.Unmarshal([]byte(last.Content), &r); err != nil {
		return model.Response{}, fmt.Errorf("the vat tool answered %q: %w", last.Content, err)
	}
	return respond(req, fmt.Sprintf("The VAT at 19%% on 2340.00 EUR is %s EUR; the total is %s EUR.", r.VAT, r.Total)), nil
}

// write is the scripted writer: English, or German when its instructions
// say so.
func write(_ context.Context, req *model.Request) (model.Response, error) {
	if strings.Contains(req.Messages[0].Content, "German") {
		return respond(req, "Vielen Dank für Ihre Bestellung. Rechnung 2026-118 beträgt 2784,60 EUR: 2340,00 EUR zuzüglich 444,60 EUR Umsatzsteuer (19 %)."), nil
	}
	return respond(req, "Thank you for your order. Invoice 2026-118 comes to 2784.60 EUR: 2340.00 EUR plus 444.60 EUR VAT at 19%."), nil
}

// refusing is a model for replays, which must not call one: every call
// fails, and is counted.
func refusing(calls *atomic.Int64) model.Model {
	return scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
		calls.Add(1)
		return model.Response{}, fmt.Errorf("a replay called the model")
	})
}

// respond is a scripted answer with plausible usage: about four bytes a
// token.
func respond(req *model.Request, text string, calls ...session.ToolCall) model.Response {
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
	}
	return model.Response{Text: text, ToolCalls: calls, Usage: session.Usage{InputTokens: int64(in+3) / 4, OutputTokens: int64(len(text)+3)/4 + 8*int64(len(calls))}}
}
