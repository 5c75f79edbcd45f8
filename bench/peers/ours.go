package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/tool"
)

// oursAgent is our agent for script s, as the repository's own benchmarks
// build it (agent/bench_test.go): a scripted.Func model, a no-op tool and,
// if st is not nil, every step committed to st. With a store, a step whose
// tool is not marked idempotent is committed twice (the turn before the tool
// runs, then its result), once if idempotent.
func oursAgent(s script, t *tally, st store.Store, idempotent bool) (*agent.Agent, error) {
	m := scripted.Func(func(ctx context.Context, r *model.Request) (model.Response, error) {
		t.model.Add(1)
		if err := s.wait(ctx); err != nil {
			return model.Response{}, err
		}
		var answered string
		if n := len(r.Messages); n > 0 {
			answered = r.Messages[n-1].ToolCallID
		}
		id, ok := s.next(answered)
		if !ok {
			return model.Response{Text: finalAnswer}, nil
		}
		return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall(id, "noop", `{}`)}}, nil
	})
	var opts []tool.Option[struct{}]
	if idempotent {
		opts = append(opts, tool.Idempotent[struct{}]())
	}
	noop, err := tool.FuncWith("noop", "Does nothing.", func(context.Context, tool.Env, struct{}) (string, error) {
		t.tool.Add(1)
		return "ok", nil
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("our tool: %w", err)
	}
	a, err := agent.New(agent.Config{Name: "bench", Model: m, Tools: []tool.Tool{noop}, Store: st, MaxSteps: s.steps()})
	if err != nil {
		return nil, fmt.Errorf("our agent: %w", err)
	}
	return a, nil
}

// oursRunner returns a runner of a: each run starts from a one-message
// session and answers with the last chunk's text.
func oursRunner(a *agent.Agent) runner {
	return func(ctx context.Context, task string) (string, error) {
		out, err := a.Forward(ctx, session.FromUser(task))
		if err != nil {
			return "", fmt.Errorf("our run: %w", err)
		}
		return answer(out)
	}
}

// answer is the text of s's last chunk, an assistant turn.
func answer(s *session.Session) (string, error) {
	last, ok := s.Last()
	if !ok || last.Assistant == nil {
		return "", errors.New("our run: the session does not end with an assistant turn")
	}
	return last.Assistant.Text, nil
}
