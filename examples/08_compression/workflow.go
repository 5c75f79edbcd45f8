package compression

import (
	"context"
	"fmt"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// Name is the workflow's registered name.
const Name = "compression"

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: Name,
		Description: "an incident investigation compressed by flow.Compressor: a summary in view, every original kept, durable notes still seen",
		Build:       build})
}

// question is what the user asks the investigator.
const question = "Checkout returned 502s from about 09:12 to 09:24 UTC today. Find the root cause."

// rule is a durable note given with the input: it must stay in view after
// compression, and the postmortem follows it.
const rule = "Standing rule from the incident commander: every postmortem names the change that triggered the incident " +
	"and the time it was rolled back, and never proposes restarting the primary database."

// Compressor settings: the last KeepRecent chunks stay in view, and at least
// MinChunks must be hidden for a summary to be worth a model call.
const (
	KeepRecent = 4
	MinChunks  = 6
)

// build returns investigate -> compress -> report, and the incident report
// with the standing rule as its input.
func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	im, err := exmodel.Pick(ctx, scripted.Func(investigate))
	if err != nil {
		return nil, nil, err
	}
	sm, err := exmodel.Pick(ctx, scripted.Func(summarise))
	if err != nil {
		return nil, nil, err
	}
	rm, err := exmodel.Pick(ctx, scripted.Func(report))
	if err != nil {
		return nil, nil, err
	}
	logTool, err := readLog()
	if err != nil {
		return nil, nil, err
	}
	investigator, err := agent.New(agent.Config{
		Name: "investigator",
		Instructions: "You are the on-call engineer. Find the root cause of the incident the user reports by reading " +
			"service logs with read_log, one service at a time. When you know the cause, state it with the evidence and the times.",
		Model: im, Tools: []tool.Tool{logTool}, MaxSteps: 10,
		Store: rt.Store, Sandboxes: rt.Sandboxes,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("compression: %w", err)
	}
	reporter, err := agent.New(agent.Config{
		Name: "reporter",
		Instructions: "You write incident postmortems for the on-call channel: five short lines (Impact, Trigger, Cause, " +
			"Resolution, Follow-up) from what is in view. Follow every standing rule in view.",
		Model: rm, Store: rt.Store, Sandboxes: rt.Sandboxes,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("compression: %w", err)
	}
	compress := &flow.Compression{Name: "history", Model: sm, KeepRecent: KeepRecent, MinChunks: MinChunks}
	wf := flow.Sequential(
		flow.Named("investigate", investigator),
		flow.Named("compress", compress),
		flow.Named("report", reporter),
	)
	in := session.FromUser(question).Append(session.Note(rule))
	return wf, in, nil
}
