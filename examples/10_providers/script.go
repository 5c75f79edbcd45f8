package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// podArgs are pods_needed's arguments.
type podArgs struct {
	TargetRPS   float64 `json:"target_rps" jsonschema:"the requests per second to serve"`
	RPSPerPod   float64 `json:"rps_per_pod" jsonschema:"the requests per second one pod handles"`
	HeadroomPct float64 `json:"headroom_pct" jsonschema:"extra capacity to keep, in percent"`
}

// podResult is what pods_needed answers.
type podResult struct {
	Exact float64 `json:"exact"`
	Pods  int     `json:"pods"`
}

// podsNeeded is the planner's tool: the arithmetic, done exactly.
func podsNeeded() (tool.Tool, error) {
	return tool.FuncWith("pods_needed", "Compute how many pods serve a load with headroom: exact and rounded up.",
		func(_ context.Context, _ tool.Env, a podArgs) (podResult, error) {
			if a.RPSPerPod <= 0 || a.TargetRPS < 0 || a.HeadroomPct < 0 {
				return podResult{}, fmt.Errorf("target_rps and headroom_pct must be >= 0 and rps_per_pod > 0")
			}
			exact := a.TargetRPS * (1 + a.HeadroomPct/100) / a.RPSPerPod
			return podResult{Exact: math.Round(exact*100) / 100, Pods: int(math.Ceil(exact - 1e-9))}, nil
		},
		tool.Idempotent[podArgs]())
}

// Offline prices, US dollars per million tokens.
var (
	fastPrice    = model.Price{Input: 0.10, Output: 0.40}
	carefulPrice = model.Price{Input: 3, Output: 15}
)

// offline returns the scripted stand-ins for two providers.
func offline() (fast, careful model.Model) {
	one := model.RetryPolicy{MaxAttempts: 1}
	fast = model.New(&scripted.Provider{Fn: answerFast}, "fast", model.Options{Retry: one, Price: &fastPrice})
	careful = model.New(&scripted.Provider{Fn: answerCarefully}, "careful", model.Options{Retry: one, Price: &carefulPrice})
	return fast, careful
}

// answerFast answers at once, and rounds down: 16.25 pods is not 16.
func answerFast(_ context.Context, req *model.Request) (model.Response, error) {
	return respond(req, "About 16 pods: 5,000 requests/s plus 30% is 6,500, and 6,500 / 400 is roughly 16."), nil
}

// answerCarefully checks the arithmetic with the tool, then answers from
// its result.
func answerCarefully(_ context.Context, req *model.Request) (model.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role != session.RoleTool {
		call := session.NewToolCall("pods_1", "pods_needed", `{"target_rps":5000,"rps_per_pod":400,"headroom_pct":30}`)
		return respond(req, "Let me compute that exactly.", call), nil
	}
	var r podResult
	if err := json.Unmarshal([]byte(last.Content), &r); err != nil {
		return respond(req, "pods_needed answered something I cannot read: "+last.Content), nil
	}
	return respond(req, fmt.Sprintf("%d pods. 5,000 requests/s plus 30%% headroom is 6,500 requests/s; at 400 per pod that is %.2f pods, rounded up to %d. "+
		"On launch day each pod then serves about %.0f requests/s, %.0f%% of its capacity.",
		r.Pods, r.Exact, r.Pods, 5000/float64(r.Pods), 100*5000/float64(r.Pods)/400)), nil
}

// respond is a scripted answer with plausible usage: about four bytes a
// token of what was sent and what is answered.
func respond(req *model.Request, text string, calls ...session.ToolCall) model.Response {
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
		for _, c := range m.ToolCalls {
			in += len(c.Name) + len(c.Args)
		}
	}
	for _, t := range req.Tools {
		in += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	out := len(text)
	for _, c := range calls {
		out += len(c.Name) + len(c.Args)
	}
	return model.Response{Text: text, ToolCalls: calls,
		Usage: session.Usage{InputTokens: int64(in+3) / 4, OutputTokens: int64(out+3) / 4}}
}
