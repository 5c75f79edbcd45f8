package otel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
)

func TestMain(m *testing.M) {
	pollInterval = 10 * time.Millisecond
	os.Exit(m.Run())
}

// openStore opens a SQLite store in a temporary directory.
func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlite.Options{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// watched is a store whose Watch says when it has subscribed, or that
// serves a channel the test controls.
type watched struct {
	store.Store
	ready  chan struct{}
	events chan store.Event // if set, Watch returns it
}

func (w watched) Watch(ctx context.Context) (<-chan store.Event, error) {
	defer close(w.ready)
	if w.events != nil {
		return w.events, nil
	}
	return w.Store.Watch(ctx)
}

// waitSpans polls exp until cond holds of its spans, failing after a
// generous deadline.
func waitSpans(t *testing.T, exp *tracetest.InMemoryExporter, what string, cond func(tracetest.SpanStubs) bool) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		spans := exp.GetSpans()
		if cond(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; spans: %v", what, names(spans))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// has returns a condition: spans hold n spans named name.
func has(name string, n int) func(tracetest.SpanStubs) bool {
	return func(spans tracetest.SpanStubs) bool { return count(spans, name) == n }
}

func count(spans tracetest.SpanStubs, name string) int {
	n := 0
	for _, s := range spans {
		if s.Name == name {
			n++
		}
	}
	return n
}

func commit(t *testing.T, st store.Store, s *session.Session, prev session.ChunkID) {
	t.Helper()
	if err := st.Commit(t.Context(), s, prev); err != nil {
		t.Fatal(err)
	}
}

func modelCall(provider, model string, latency time.Duration, in, out int64) *session.ModelCall {
	return &session.ModelCall{Provider: provider, Model: model, Latency: latency,
		Response: session.ModelOutput{FinishReason: "stop", Model: model, RequestID: "resp-" + model},
		Usage:    session.Usage{InputTokens: in, OutputTokens: out}}
}

func TestLive(t *testing.T) {
	st := openStore(t)
	tp, exp := recorder(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := watched{Store: st, ready: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- Live(ctx, w, tp) }()
	<-w.ready

	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	sec := func(f float64) time.Time { return base.Add(time.Duration(f * float64(time.Second))) }

	// Step 1: the input and the coder's first model call.
	s := session.New().Append(
		session.User("TestParse fails").WithTime(sec(0)),
		session.System("you fix bugs").WithNode(coder).WithTime(sec(1)),
		session.Of(modelCall("anthropic", "claude-sonnet", 2*time.Second, 100, 20)).WithNode(coder).WithTime(sec(4)),
	)
	commit(t, st, s, "")
	spans := waitSpans(t, exp, "the first chat span", has("chat claude-sonnet", 1))
	chat1 := one(t, spans, "chat claude-sonnet")
	if !chat1.StartTime.Equal(sec(2)) || !chat1.EndTime.Equal(sec(4)) {
		t.Errorf("chat span %v .. %v, want 2s .. 4s", chat1.StartTime.Sub(base), chat1.EndTime.Sub(base))
	}
	checkAttrs(t, "live chat", chat1.Attributes, map[attribute.Key]any{
		KeyOperationName: "chat", KeyConversationID: string(s.ID()), KeyNode: coder,
		KeyProviderName: "anthropic", KeyRequestModel: "claude-sonnet", KeyResponseModel: "claude-sonnet",
		KeyResponseID: "resp-claude-sonnet", KeyFinishReasons: []string{"stop"},
		KeyInputTokens: 100, KeyOutputTokens: 20,
	})
	if n := count(spans, "invoke_agent coder") + count(spans, "invoke_workflow new"); n != 0 {
		t.Errorf("%d workflow or agent spans ended while the session is open", n)
	}

	// Step 2: a failing tool, then a second agent.
	prev := s.Head()
	s = s.Append(
		session.Result(session.ToolResult{CallID: "call_1", Tool: "run_tests",
			Error:    &session.ToolError{Kind: session.ToolErrTimeout, Message: "timed out"},
			Duration: time.Second}).WithNode(coder).WithTime(sec(6)),
		session.Of(modelCall("openai", "gpt-5", time.Second, 50, 10)).WithNode(reviewer).WithTime(sec(8)),
	)
	commit(t, st, s, prev)
	spans = waitSpans(t, exp, "the tool and second chat spans", func(ss tracetest.SpanStubs) bool {
		return count(ss, "execute_tool run_tests") == 1 && count(ss, "chat gpt-5") == 1
	})
	tool := one(t, spans, "execute_tool run_tests")
	checkStatus(t, tool, codes.Error, "timed out")
	if !tool.StartTime.Equal(sec(5)) || !tool.EndTime.Equal(sec(6)) {
		t.Errorf("tool span %v .. %v, want 5s .. 6s", tool.StartTime.Sub(base), tool.EndTime.Sub(base))
	}
	checkAttrs(t, "live tool", tool.Attributes, map[attribute.Key]any{
		KeyOperationName: "execute_tool", KeyConversationID: string(s.ID()), KeyNode: coder,
		KeyToolName: "run_tests", KeyToolCallID: "call_1", KeyToolType: "function", KeyErrorType: "timeout",
	})

	// A session derived from it shares its chunks: only its own are new.
	d := s.Derive("0/agent:fixer#1", nil).Append(
		session.Of(modelCall("anthropic", "fixer-model", time.Second, 5, 5)).WithNode("0/agent:fixer#1").WithTime(sec(10)),
	)
	commit(t, st, d, "")
	spans = waitSpans(t, exp, "the derived session's chat span", has("chat fixer-model", 1))
	if n := count(spans, "chat claude-sonnet") + count(spans, "chat gpt-5") + count(spans, "execute_tool run_tests"); n != 3 {
		t.Errorf("%d spans for the first session's chunks after the derived commit, want 3 (no duplicates)", n)
	}

	// Closing the first session ends its workflow and agent spans.
	for _, to := range []store.Status{store.StatusActive, store.StatusClosed} {
		if err := st.SetStatus(t.Context(), s.ID(), to); err != nil {
			t.Fatal(err)
		}
	}
	spans = waitSpans(t, exp, "the closed session's workflow span", has("invoke_workflow new", 1))
	info, err := st.Info(t.Context(), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	wf := one(t, spans, "invoke_workflow new")
	checkStatus(t, wf, codes.Unset, "")
	if !wf.StartTime.Equal(sec(0)) || !wf.EndTime.Equal(info.Updated) {
		t.Errorf("workflow span %v .. %v, want 0s .. %v", wf.StartTime.Sub(base), wf.EndTime.Sub(base), info.Updated.Sub(base))
	}
	cod := one(t, spans, "invoke_agent coder")
	rev := one(t, spans, "invoke_agent reviewer")
	childOf(t, cod, wf)
	childOf(t, rev, wf)
	childOf(t, chat1, cod)
	childOf(t, tool, cod)
	childOf(t, one(t, spans, "chat gpt-5"), rev)
	if !cod.StartTime.Equal(sec(1)) || !cod.EndTime.Equal(sec(6)) {
		t.Errorf("coder span %v .. %v, want 1s .. 6s", cod.StartTime.Sub(base), cod.EndTime.Sub(base))
	}
	if count(spans, "invoke_workflow 0/agent:fixer#1") != 0 {
		t.Error("the derived session's workflow span ended while it is open")
	}

	// Stopping Live ends the rest at the latest time they cover.
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Live: %v", err)
	}
	spans = exp.GetSpans()
	dwf := one(t, spans, "invoke_workflow 0/agent:fixer#1")
	childOf(t, dwf, wf)
	fix := one(t, spans, "invoke_agent fixer")
	childOf(t, fix, dwf)
	childOf(t, one(t, spans, "chat fixer-model"), fix)
	if !fix.StartTime.Equal(sec(9)) || !fix.EndTime.Equal(sec(10)) || !dwf.EndTime.Equal(sec(10)) {
		t.Errorf("fixer span %v .. %v and its workflow's end %v, want 9s .. 10s and 10s",
			fix.StartTime.Sub(base), fix.EndTime.Sub(base), dwf.EndTime.Sub(base))
	}
	if len(spans) != 9 {
		t.Errorf("%d spans, want 9: %v", len(spans), names(spans))
	}
}

// TestLiveMissed feeds Live events by hand: one that says events were
// dropped, for a session other than the one committed meanwhile.
func TestLiveMissed(t *testing.T) {
	st := openStore(t)
	tp, exp := recorder(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := watched{Store: st, ready: make(chan struct{}), events: make(chan store.Event)}
	done := make(chan error, 1)
	go func() { done <- Live(ctx, w, tp) }()
	<-w.ready

	now := time.Now().Truncate(time.Millisecond)
	a := session.New().Append(session.Of(modelCall("openai", "model-a", time.Second, 1, 1)).WithNode("agent:a#1").WithTime(now))
	b := session.New().Append(session.Of(modelCall("openai", "model-b", time.Second, 1, 1)).WithNode("agent:b#1").WithTime(now))
	commit(t, st, a, "")
	commit(t, st, b, "")
	w.events <- store.Event{ID: b.ID(), Head: b.Head(), Len: b.Len(), Missed: true}
	waitSpans(t, exp, "the chat span of the session whose event was dropped", func(ss tracetest.SpanStubs) bool {
		return count(ss, "chat model-a") == 1 && count(ss, "chat model-b") == 1
	})

	// A failed session's workflow span ends with status Error.
	for _, to := range []store.Status{store.StatusActive, store.StatusFailed} {
		if err := st.SetStatus(t.Context(), a.ID(), to); err != nil {
			t.Fatal(err)
		}
	}
	spans := waitSpans(t, exp, "the failed session's workflow span", has("invoke_workflow new", 1))
	wf := one(t, spans, "invoke_workflow new")
	checkStatus(t, wf, codes.Error, "session failed")
	if got := attrs(wf.Attributes)[KeyConversationID]; got != string(a.ID()) {
		t.Errorf("ended workflow span is session %v's, want the failed %s's", got, a.ID())
	}
	if got := attrs(wf.Attributes)[KeyErrorType]; got != "failed" {
		t.Errorf("failed session's error.type %v, want failed", got)
	}

	// The watch ending before ctx is an error.
	close(w.events)
	if err := <-done; err == nil {
		t.Error("Live returned nil when its watch ended")
	}
	spans = exp.GetSpans()
	if count(spans, "invoke_workflow new") != 2 || count(spans, "invoke_agent b") != 1 {
		t.Errorf("spans after Live stopped: %v", names(spans))
	}
}

func TestLiveWatchError(t *testing.T) {
	st := openStore(t)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	tp, _ := recorder(t)
	if err := Live(t.Context(), st, tp); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Live on a closed store: %v, want %v", err, store.ErrClosed)
	}
}
