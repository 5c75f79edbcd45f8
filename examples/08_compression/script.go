package compression

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// The offline models: scripted answers consistent with the logs, so the
// example tells the same story without a key.

// remarks is what the scripted investigator says before reading each
// service's log, in the order of services.
var remarks = []string{
	"The 502s are the gateway's, so I start there.",
	"The gateway lost its upstream, checkout. Reading checkout's log.",
	"Checkout timed out waiting for payments.Authorize. Reading payments.",
	"Payments could not get database connections right after deploy v4.18.0. Checking postgres.",
	"Postgres ran out of connections. Ruling out inventory, checkout's other dependency.",
}

const finding = `Root cause: payments v4.18.0 (change #2291, deployed 09:11:55) retries card authorisation five times without backoff. ` +
	`The retries took every database connection (postgres at 500 of 500, refusing the rest), payments.Authorize slowed from 240 ms to 9.8 s, ` +
	`checkout's payment pool filled and its requests hit the 30 s deadline, and the gateway answered 502 to about half of all checkouts. ` +
	`The on-call rollback to v4.17.2 at 09:23:50 ended it; the gateway was clean by 09:24:40. Inventory was healthy throughout.`

// investigate reads one log a step, then states the cause.
func investigate(_ context.Context, req *model.Request) (model.Response, error) {
	read := 0
	for _, m := range req.Messages {
		if m.Role == session.RoleTool {
			read++
		}
	}
	if read < len(services) {
		call := session.NewToolCall(fmt.Sprintf("call_%d", read+1), "read_log", fmt.Sprintf(`{"service":%q}`, services[read]))
		return respond(req, remarks[read], call), nil
	}
	return respond(req, finding), nil
}

const summary = `Goal: find why checkout returned 502s from 09:12 to 09:24 UTC. ` +
	`Done: read the gateway, checkout, payments, postgres and inventory logs. ` +
	`Found: payments v4.18.0 (change #2291, deployed 09:11:55) retries card authorisation 5x without backoff; ` +
	`it exhausted postgres (500 of 500 connections, thousands refused), Authorize slowed to 9.8 s, ` +
	`checkout's requests hit their 30 s deadline and the gateway returned 502 to about half of all checkouts. ` +
	`Resolved by the rollback to v4.17.2 at 09:23:50; errors stopped by 09:24:40. Inventory was healthy. ` +
	`Open: why #2291 passed review.`

// summarise is the compressor's model.
func summarise(_ context.Context, req *model.Request) (model.Response, error) {
	return respond(req, summary), nil
}

// report writes the postmortem from what is in view, following the
// standing rule if it can see it.
func report(_ context.Context, req *model.Request) (model.Response, error) {
	lines := []string{
		"Impact: checkout answered 502 to about half of all requests from 09:12 to 09:24 UTC.",
		"Trigger: payments v4.18.0 (change #2291, deployed 09:11:55), rolled back to v4.17.2 at 09:23:50.",
		"Cause: five retries without backoff per card authorisation took all 500 postgres connections; payments slowed to 9.8 s, checkout hit its 30 s deadline, the gateway returned 502.",
		"Resolution: the rollback; the gateway was clean by 09:24:40.",
		"Follow-up: a retry budget with backoff in payments, an alert on postgres connections above 90%, and a look at how #2291 passed review.",
	}
	for _, m := range req.Messages {
		if m.Role == session.RoleSystem && strings.Contains(m.Content, rule) {
			lines = append(lines, "Per the standing rule: the trigger and its rollback time are named above, and no database restart is proposed.")
			break
		}
	}
	return respond(req, strings.Join(lines, "\n")), nil
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
	out := len(text)
	for _, c := range calls {
		out += len(c.Name) + len(c.Args)
	}
	return model.Response{Text: text, ToolCalls: calls,
		Usage: session.Usage{InputTokens: int64(in+3) / 4, OutputTokens: int64(out+3) / 4}}
}
