package selector

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Models are the models the workflow's parts use.
type Models struct {
	Triage     model.Model // chooses the triage route
	Engineer   model.Model // the bug route's agent
	Billing    model.Model // the billing route's agent
	Docs       model.Model // the how-to route's agent
	Escalation model.Model // writes the page on the urgent route
}

// Workflow returns triage (chosen by a model) -> priority (chosen in Go),
// with agents committing to st and opening sandboxes from pool (both may
// be nil).
func Workflow(ms Models, st store.Store, pool *sandbox.Pool) (flow.Module, error) {
	mk := func(name, instructions string, m model.Model) (*agent.Agent, error) {
		a, err := agent.New(agent.Config{Name: name, Instructions: instructions, Model: m, Store: st, Sandboxes: pool})
		if err != nil {
			return nil, fmt.Errorf("selector: %w", err)
		}
		return a, nil
	}
	engineer, err := mk("engineer", "You are a support engineer. For a defect report, state the likely cause, how to reproduce it, and a workaround if there is one.", ms.Engineer)
	if err != nil {
		return nil, err
	}
	billing, err := mk("billing", "You handle billing questions: invoices, charges, refunds and plan changes. Say what you will do and when.", ms.Billing)
	if err != nil {
		return nil, err
	}
	docs, err := mk("docs", "You answer how-to questions about the product with short numbered steps.", ms.Docs)
	if err != nil {
		return nil, err
	}
	pager, err := mk("escalation", "You write the page sent to the on-call engineer: one line starting with the priority, then who is affected and any deadline.", ms.Escalation)
	if err != nil {
		return nil, err
	}
	triage := flow.ModelSelector("triage", ms.Triage,
		flow.Route{Name: "bug", Description: "a defect: errors, crashes or regressions, such as something that broke after an upgrade", Module: engineer},
		flow.Route{Name: "billing", Description: "invoices, charges, refunds or plan changes", Module: billing},
		flow.Route{Name: "how-to", Description: "a question about using a feature that works as designed", Module: docs},
	)
	priority := flow.Selector("priority", byUrgency,
		flow.Route{Name: "urgent", Description: "blocks many people or has a deadline: page the on-call engineer now", Module: pager},
		flow.Route{Name: "normal", Description: "everything else: the ticket waits in the queue for the next triage meeting"},
	)
	return flow.Sequential(flow.Named("triage", triage), flow.Named("priority", priority)), nil
}

// Signals of urgency a ticket can carry, by what they mean.
var (
	deadlines = []string{"deadline", "today", "tomorrow", "friday", "month-end", "close", "launch"}
	breadth   = []string{"every", "all ", "everyone", "nobody can", "whole team"}
)

// byUrgency is the priority selector's Go chooser: a ticket with a
// deadline that blocks more than one person is urgent.
func byUrgency(_ context.Context, s *session.Session, _ []flow.Route) (string, string, error) {
	ticket := ""
	for _, c := range s.All() {
		if c.User != nil {
			ticket = c.User.Text
			break
		}
	}
	lower := strings.ToLower(ticket)
	var dl, br []string
	for _, w := range deadlines {
		if strings.Contains(lower, w) {
			dl = append(dl, strings.TrimSpace(w))
		}
	}
	for _, w := range breadth {
		if strings.Contains(lower, w) {
			br = append(br, strings.TrimSpace(w))
		}
	}
	if len(dl) > 0 && len(br) > 0 {
		return "urgent", fmt.Sprintf("the ticket names a deadline (%s) and affects many people (%s)", strings.Join(dl, ", "), strings.Join(br, ", ")), nil
	}
	return "normal", fmt.Sprintf("no deadline together with wide impact (deadline words: %d, breadth words: %d)", len(dl), len(br)), nil
}
