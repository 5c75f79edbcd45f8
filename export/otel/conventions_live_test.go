package otel_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/export/otel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool"
)

// liveWorkflow names the workflow TestLiveFollowsConventions runs: a
// planner agent that calls a tool that works and one that fails, then a
// writer agent asked for JSON whose model fails for good, which fails the
// run.
const liveWorkflow = "otel-conventions"

var errBroken = errors.New("broken on purpose")

type lookupIn struct {
	Key string `json:"key"`
}

func buildLiveWorkflow(st store.Store) (flow.Module, *session.Session, error) {
	lookup, err := tool.Func("lookup", "looks a key up", func(_ context.Context, in lookupIn) (string, error) {
		return "value of " + in.Key, nil
	})
	if err != nil {
		return nil, nil, err
	}
	broken, err := tool.Func("broken", "always fails", func(context.Context, lookupIn) (string, error) {
		return "", errBroken
	})
	if err != nil {
		return nil, nil, err
	}
	planner, err := agent.New(agent.Config{Name: "planner", Instructions: "You plan.", Store: st,
		Tools: []tool.Tool{lookup, broken},
		Model: scripted.New(
			model.Response{ToolCalls: []session.ToolCall{
				{ID: "call_1", Name: "lookup", Args: json.RawMessage(`{"key":"a"}`)},
				{ID: "call_2", Name: "broken", Args: json.RawMessage(`{"key":"b"}`)},
			}, FinishReason: "tool_calls", Model: "scripted-2026", RequestID: "req_1",
				Usage: session.Usage{InputTokens: 40, OutputTokens: 8}},
			model.Response{Text: "planned", FinishReason: "stop", Model: "scripted-2026", RequestID: "req_2",
				Usage: session.Usage{InputTokens: 60, OutputTokens: 4}},
		)})
	if err != nil {
		return nil, nil, err
	}
	writer, err := agent.New(agent.Config{Name: "writer", Instructions: "You write JSON.", Store: st,
		Params: model.Params{ResponseSchema: json.RawMessage(`{"type":"object"}`), Stop: []string{"END"}},
		Model: scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
			return model.Response{}, &model.StatusError{Status: 503, Message: "overloaded"}
		})})
	if err != nil {
		return nil, nil, err
	}
	return flow.Sequential(flow.Named("plan", planner), flow.Named("write", writer)), session.FromUser("fix TestParse"), nil
}

// watching is a store whose Watch says when Live has subscribed.
type watching struct {
	store.Store
	ready chan struct{}
}

func (w watching) Watch(ctx context.Context) (<-chan store.Event, error) {
	defer close(w.ready)
	return w.Store.Watch(ctx)
}

// runWorkflow runs m on in durably in st as the runtime runs a registered
// workflow called name: flow.Run labels the output with the workflow's
// name (WorkflowLabel), and the output is then marked closed or failed.
func runWorkflow(ctx context.Context, st store.Store, name string, m flow.Module, in *session.Session) (*session.Session, error) {
	out, err := flow.Run(flow.WithOutputLabels(ctx, map[string]string{otel.WorkflowLabel: name}), st, m, in)
	if out == nil {
		return nil, err
	}
	status := store.StatusClosed
	if err != nil {
		status = store.StatusFailed
	}
	return out, errors.Join(err, store.MoveTo(ctx, st, out.ID(), status))
}

// TestLiveFollowsConventions runs a workflow on a store that Live traces
// to an OTLP receiver and checks every span the receiver gets.
func TestLiveFollowsConventions(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	ctx := t.Context()
	tp, err := otel.OTLP(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tp.Shutdown(context.WithoutCancel(ctx)) }()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	traced := make(chan error, 1)
	w := watching{Store: st, ready: make(chan struct{})}
	go func() { traced <- otel.Live(lctx, w, tp) }()
	<-w.ready // Live sees every commit from here on
	m, in, err := buildLiveWorkflow(st)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runWorkflow(ctx, st, liveWorkflow, m, in)
	if out == nil || err == nil {
		t.Fatalf("the run: %v, %v; want an output and the writer's failure", out, err)
	}

	// The workflow span ends once Live sees the failed output: wait for it.
	name := "invoke_workflow " + liveWorkflow
	deadline := time.Now().Add(time.Minute)
	for {
		if err := tp.ForceFlush(ctx); err != nil {
			t.Fatal(err)
		}
		pbs, _ := rcv.received()
		if len(named(spansOf(pbs), name)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q span received; spans: %d", name, len(pbs))
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-traced; err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	pbs, refused := rcv.received()
	if len(refused) > 0 {
		t.Fatalf("the receiver refused requests: %v", refused)
	}
	spans := spansOf(pbs)
	checkConventions(t, spans)

	wf := only(t, spans, name)
	checkWant(t, wf, want{attrs: map[string]any{workflowName: liveWorkflow, errorType: "failed"}})
	if n := len(named(spans, "invoke_workflow")); n != 0 {
		t.Errorf("%d unnamed workflow spans: the run should be one trace", n)
	}
	pl := only(t, spans, "invoke_agent planner")
	under(t, pl, wf)
	checkWant(t, pl, want{attrs: map[string]any{agentName: "planner", providerName: "scripted", requestModel: "scripted"},
		absent: []string{errorType}})
	wr := only(t, spans, "invoke_agent writer")
	under(t, wr, wf)
	checkWant(t, wr, want{attrs: map[string]any{agentName: "writer", providerName: "scripted", requestModel: "scripted",
		errorType: "model"}})

	var chats []span
	for _, s := range named(spans, "chat scripted") {
		if string(s.ParentSpanId) == string(pl.SpanId) {
			chats = append(chats, s)
			checkWant(t, s, want{attrs: map[string]any{providerName: "scripted", requestModel: "scripted",
				"gen_ai.response.model": "scripted-2026", "gen_ai.request.stream": true},
				absent: []string{errorType, "gen_ai.output.type"}})
		} else {
			under(t, s, wr)
			checkWant(t, s, want{attrs: map[string]any{errorType: "503", "gen_ai.output.type": "json",
				"gen_ai.request.stop_sequences": []string{"END"}}, absent: []string{"gen_ai.response.model"}})
		}
	}
	if len(chats) != 2 {
		t.Errorf("%d chat spans under the planner, want 2", len(chats))
	}
	lk := only(t, spans, "execute_tool lookup")
	under(t, lk, pl)
	checkWant(t, lk, want{attrs: map[string]any{toolCallID: "call_1"}, absent: []string{errorType}})
	br := only(t, spans, "execute_tool broken")
	under(t, br, pl)
	checkWant(t, br, want{attrs: map[string]any{toolCallID: "call_2", errorType: "execution"}})
}
