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

// startLive runs Live on st with an in-memory exporter until the test ends
// or stop is called; stop returns Live's error.
func startLive(t *testing.T, st store.Store) (exp *tracetest.InMemoryExporter, stop func() error) {
	t.Helper()
	tp, exp := recorder(t)
	ctx, cancel := context.WithCancel(t.Context())
	w := watched{Store: st, ready: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- Live(ctx, w, tp) }()
	<-w.ready
	var err error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			err = <-done
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return exp, stop
}

func moveTo(t *testing.T, st store.Store, id session.ID, to store.Status) {
	t.Helper()
	if err := store.MoveTo(t.Context(), st, id, to); err != nil {
		t.Fatal(err)
	}
}

func TestLive(t *testing.T) {
	st := openStore(t)
	exp, stop := startLive(t, st)

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
	if n := count(spans, "invoke_agent coder") + count(spans, "invoke_workflow"); n != 0 {
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

	// A session derived from it shares its chunks: only its own are new,
	// and they join its workflow.
	fixer := "0/agent:fixer#1"
	d := s.Derive(fixer, nil).Append(
		session.Of(modelCall("anthropic", "fixer-model", time.Second, 5, 5)).WithNode(fixer).WithTime(sec(10)),
	)
	commit(t, st, d, "")
	spans = waitSpans(t, exp, "the derived session's chat span", has("chat fixer-model", 1))
	if n := count(spans, "chat claude-sonnet") + count(spans, "chat gpt-5") + count(spans, "execute_tool run_tests"); n != 3 {
		t.Errorf("%d spans for the first session's chunks after the derived commit, want 3 (no duplicates)", n)
	}

	// The input closing does not end the workflow while a session derived
	// from it is open: the derived session's later chunk (ending after
	// everything else, even the statuses' times) stays in the same trace.
	moveTo(t, st, s.ID(), store.StatusClosed)
	late := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	prev = d.Head()
	d = d.Append(session.Result(session.ToolResult{CallID: "call_2", Tool: "apply_patch", Duration: time.Second}).
		WithNode(fixer).WithTime(late))
	commit(t, st, d, prev)
	waitSpans(t, exp, "the derived session's late tool span", has("execute_tool apply_patch", 1))

	// The derived session is the run's output: its label names the
	// workflow, and its closing ends the workflow.
	if err := st.SetLabel(t.Context(), d.ID(), WorkflowLabel, "fix"); err != nil {
		t.Fatal(err)
	}
	moveTo(t, st, d.ID(), store.StatusClosed)
	spans = waitSpans(t, exp, "the workflow span", has("invoke_workflow fix", 1))
	wf := one(t, spans, "invoke_workflow fix")
	checkStatus(t, wf, codes.Unset, "")
	if wf.Parent.IsValid() {
		t.Errorf("workflow span has parent %v", wf.Parent)
	}
	a := attrs(wf.Attributes)
	if a[KeyWorkflowName] != "fix" || a[KeyConversationID] != string(s.ID()) || a[KeyOperationName] != OpWorkflow {
		t.Errorf("workflow span attributes %v", a)
	}
	if !wf.StartTime.Equal(sec(0)) || !wf.EndTime.Equal(late) {
		t.Errorf("workflow span %v .. %v, want 0s .. the late tool's end %v", wf.StartTime.Sub(base), wf.EndTime.Sub(base), late.Sub(base))
	}
	checkEvents(t, wf, wantEvent{EventSession, sec(9), map[attribute.Key]any{KeySession: string(d.ID()),
		KeyLineageOp: fixer, KeyLineageKind: "derive", KeyParents: []string{string(s.ID())}}})
	cod := one(t, spans, "invoke_agent coder")
	rev := one(t, spans, "invoke_agent reviewer")
	fix := one(t, spans, "invoke_agent fixer")
	for _, ag := range []tracetest.SpanStub{cod, rev, fix} {
		childOf(t, ag, wf)
	}
	childOf(t, chat1, cod)
	childOf(t, tool, cod)
	childOf(t, one(t, spans, "chat gpt-5"), rev)
	childOf(t, one(t, spans, "chat fixer-model"), fix)
	childOf(t, one(t, spans, "execute_tool apply_patch"), fix)
	if !cod.StartTime.Equal(sec(1)) || !cod.EndTime.Equal(sec(6)) {
		t.Errorf("coder span %v .. %v, want 1s .. 6s", cod.StartTime.Sub(base), cod.EndTime.Sub(base))
	}
	checkAttrs(t, "live coder", cod.Attributes, map[attribute.Key]any{
		KeyOperationName: "invoke_agent", KeyAgentName: "coder", KeyConversationID: string(s.ID()), KeyNode: coder,
		KeyProviderName: "anthropic", KeyRequestModel: "claude-sonnet",
	})
	if got := attrs(fix.Attributes)[KeyConversationID]; got != string(d.ID()) {
		t.Errorf("fixer agent's conversation %v, want the derived session %s", got, d.ID())
	}

	// After the workflow ended, a chunk committed to its input starts a
	// new trace rather than a child of an ended span.
	prev = s.Head()
	s2 := s.Append(session.Of(modelCall("openai", "after", time.Second, 1, 1)).WithNode(reviewer).WithTime(late.Add(time.Minute)))
	commit(t, st, s2, prev)
	waitSpans(t, exp, "the chat span after the workflow ended", has("chat after", 1))
	if err := stop(); err != nil {
		t.Fatalf("Live: %v", err)
	}
	spans = exp.GetSpans()
	checkTree(t, spans)
	if n := count(spans, "invoke_workflow fix"); n != 1 {
		t.Errorf("%d workflow spans named fix, want 1: %v", n, names(spans))
	}
	after := one(t, spans, "chat after")
	if after.SpanContext.TraceID() == wf.SpanContext.TraceID() {
		t.Error("a chunk committed after the workflow ended joined its trace")
	}
	if n := count(spans, "invoke_workflow"); n != 1 {
		t.Errorf("%d unnamed workflow spans, want 1 (the trace started after the end): %v", n, names(spans))
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
	spans := waitSpans(t, exp, "the failed session's workflow span", has("invoke_workflow", 1))
	wf := one(t, spans, "invoke_workflow")
	checkStatus(t, wf, codes.Error, "session failed")
	if got := attrs(wf.Attributes)[KeyConversationID]; got != string(a.ID()) {
		t.Errorf("ended workflow span is session %v's, want the failed %s's", got, a.ID())
	}
	if got := attrs(wf.Attributes)[KeyErrorType]; got != "failed" {
		t.Errorf("failed session's error.type %v, want failed", got)
	}

	// The watch ending before ctx is an error.
	close(w.events)
	if err := <-done; !errors.Is(err, ErrWatchEnded) {
		t.Errorf("Live returned %v when its watch ended, want %v", err, ErrWatchEnded)
	}
	spans = exp.GetSpans()
	checkTree(t, spans)
	if count(spans, "invoke_workflow") != 2 || count(spans, "invoke_agent b") != 1 {
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

// TestLiveCutShort stops Live while runs are under way: nothing has
// finished, a nested agent's last chunk is later than its enclosing
// agent's, and a merge joins two workflows. Every span still ends within
// its parent.
func TestLiveCutShort(t *testing.T) {
	st := openStore(t)
	exp, stop := startLive(t, st)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	sec := func(f float64) time.Time { return base.Add(time.Duration(f * float64(time.Second))) }
	const lead, inner = "0/agent:lead#1", "0/agent:lead#1/agent:coder#1"

	a := session.New().Append(
		session.User("go").WithTime(sec(0)),
		session.Of(modelCall("openai", "lead-model", time.Second, 1, 1)).WithNode(lead).WithTime(sec(2)),
	)
	commit(t, st, a, "")
	b := session.New().Append(session.Of(modelCall("openai", "other-model", time.Second, 1, 1)).WithNode("agent:other#1").WithTime(sec(3)))
	commit(t, st, b, "")
	// A derived session whose nested agent works past everything else.
	d := a.Derive(inner, nil).Append(
		session.Result(session.ToolResult{CallID: "c1", Tool: "edit", Duration: time.Second}).WithNode(inner).WithTime(sec(30)),
	)
	commit(t, st, d, "")
	m, err := d.Merge(b, session.MergeOp("join"))
	if err != nil {
		t.Fatal(err)
	}
	m = m.Append(session.Note("joined").WithNode(lead).WithTime(sec(31)))
	commit(t, st, m, "")
	waitSpans(t, exp, "every chat and tool span", func(ss tracetest.SpanStubs) bool {
		return count(ss, "chat lead-model") == 1 && count(ss, "chat other-model") == 1 && count(ss, "execute_tool edit") == 1
	})
	// The merge's note is an event on no span of its own: wait for Live to
	// have read it by waiting for a later commit's span.
	m2 := m.Append(session.Of(modelCall("openai", "marker", time.Second, 1, 1)).WithNode(lead).WithTime(sec(33)))
	commit(t, st, m2, m.Head())
	waitSpans(t, exp, "the marker chat span", has("chat marker", 1))
	if n := count(exp.GetSpans(), "invoke_workflow"); n != 0 {
		t.Fatalf("%d workflow spans ended before Live stopped", n)
	}

	if err := stop(); err != nil {
		t.Fatalf("Live: %v", err)
	}
	spans := exp.GetSpans()
	checkTree(t, spans)
	if n := count(spans, "invoke_workflow"); n != 2 {
		t.Fatalf("%d workflow spans, want 2 (a's and b's): %v", n, names(spans))
	}
	var wfA, wfB tracetest.SpanStub
	for _, s := range spans {
		if s.Name != "invoke_workflow" {
			continue
		}
		switch attrs(s.Attributes)[KeyConversationID] {
		case string(a.ID()):
			wfA = s
		case string(b.ID()):
			wfB = s
		}
	}
	ld, cd := one(t, spans, "invoke_agent lead"), one(t, spans, "invoke_agent coder")
	childOf(t, ld, wfA)
	childOf(t, cd, ld)
	childOf(t, one(t, spans, "execute_tool edit"), cd)
	childOf(t, one(t, spans, "chat marker"), ld)
	if !ld.EndTime.Equal(sec(33)) || !cd.EndTime.Equal(sec(30)) || !wfA.EndTime.Equal(sec(33)) {
		t.Errorf("ends: lead %v, coder %v, workflow %v; want 33s, 30s, 33s",
			ld.EndTime.Sub(base), cd.EndTime.Sub(base), wfA.EndTime.Sub(base))
	}
	if len(wfA.Links) != 1 || wfA.Links[0].SpanContext.SpanID() != wfB.SpanContext.SpanID() {
		t.Errorf("a's workflow links %v, want one to b's workflow %s", wfA.Links, wfB.SpanContext.SpanID())
	}
	// gen_ai.provider.name is required of agent spans: the lead's is its
	// model call's, the coder made none.
	if p := attrs(ld.Attributes)[KeyProviderName]; p != "openai" {
		t.Errorf("lead agent's provider %v, want openai", p)
	}
	if p := attrs(cd.Attributes)[KeyProviderName]; p != "_OTHER" {
		t.Errorf("coder agent's provider %v, want _OTHER", p)
	}
}

// TestLiveOutputFinishedUnseen: a run's output that brings no chunk of its
// own (a merge re-chains its parents' chunks) and is labelled and closed
// before Live reads it still names and ends its workflow.
func TestLiveOutputFinishedUnseen(t *testing.T) {
	st := openStore(t)
	tp, exp := recorder(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := watched{Store: st, ready: make(chan struct{}), events: make(chan store.Event)}
	done := make(chan error, 1)
	go func() { done <- Live(ctx, w, tp) }()
	<-w.ready

	now := time.Now().Truncate(time.Millisecond)
	in := session.New().Append(session.Of(modelCall("openai", "model-a", time.Second, 1, 1)).WithNode("agent:a#1").WithTime(now))
	commit(t, st, in, "")
	w.events <- store.Event{ID: in.ID(), Head: in.Head(), Len: in.Len()}
	waitSpans(t, exp, "the input's chat span", has("chat model-a", 1))

	out := in.Derive("join", nil)
	commit(t, st, out, "")
	if err := st.SetLabel(t.Context(), out.ID(), WorkflowLabel, "fix"); err != nil {
		t.Fatal(err)
	}
	moveTo(t, st, out.ID(), store.StatusFailed)
	w.events <- store.Event{ID: out.ID(), Head: out.Head(), Len: out.Len()}
	spans := waitSpans(t, exp, "the workflow span", has("invoke_workflow fix", 1))
	wf := one(t, spans, "invoke_workflow fix")
	checkStatus(t, wf, codes.Error, "session failed")
	childOf(t, one(t, spans, "invoke_agent a"), wf)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Live: %v", err)
	}
	spans = exp.GetSpans()
	checkTree(t, spans)
	if len(spans) != 3 {
		t.Errorf("%d spans, want 3: %v", len(spans), names(spans))
	}
}
