package export

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
)

// openStore opens a fresh SQLite store in a temporary directory.
func openStore(tb testing.TB) store.Store {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(tb.TempDir(), "s.db")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// commit stores s as a new session (or appends to the stored one at prev).
func commit(tb testing.TB, st store.Store, s *session.Session, prev session.ChunkID) {
	tb.Helper()
	if err := st.Commit(context.Background(), s, prev); err != nil {
		tb.Fatalf("commit %s: %v", s.ID(), err)
	}
}

// lineage is a fork+merge history:
//
//	root ─fork→ a ─┐
//	     └fork→ b ─┴merge→ m ─derive→ child
type lineage struct {
	root, a, b, m, child *session.Session
}

func buildLineage(tb testing.TB, st store.Store) lineage {
	tb.Helper()
	var l lineage
	l.root = session.FromUser("fix the bug").Append(session.Assistant("on it"))
	commit(tb, st, l.root, "")
	l.a = l.root.Fork().Append(session.Note("branch a"))
	commit(tb, st, l.a, "")
	// Sessions created in the same millisecond sort by id; a pause keeps
	// creation order obvious.
	time.Sleep(2 * time.Millisecond)
	l.b = l.root.Fork().Append(session.Note("branch b"))
	commit(tb, st, l.b, "")
	m, err := l.a.Merge(l.b)
	if err != nil {
		tb.Fatal(err)
	}
	l.m = m
	commit(tb, st, l.m, "")
	time.Sleep(2 * time.Millisecond)
	l.child = l.m.Derive("agent:reviewer", nil).Append(session.Assistant("looks good"))
	commit(tb, st, l.child, "")
	return l
}

// hostile is a tool argument that must never reach the page as markup.
const hostile = `<script>alert(1)</script>`

const (
	coder    = "0/triage/branch-1/agent:coder#1"
	reviewer = "0/review/agent:reviewer#1"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// args encodes tool arguments as a model would send them: compact, with
// <, > and & as they are.
func args(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// richSession is a run that exercises every dossier section: placement,
// node paths, tool calls with effects, tests, decisions, approvals,
// rejections, memory, model calls with usage, errors.
// richNote is the evidence note on the rich session's run_code result.
const richNote = "a secret value was replaced with [redacted] <in the output>"

func richSession() *session.Session {
	spec := session.Spec{Dir: "/ws", Image: "python:3.12", Env: map[string]string{"LANG": "C"}, SecretEnv: []string{"API_KEY"}, Timeout: time.Minute}
	evidence := session.FromUser("earlier").Head()
	tick := 0
	at := func(c session.Chunk) session.Chunk {
		tick++
		return c.WithTime(t0.Add(time.Duration(tick) * time.Second))
	}
	s := session.FromUser("Fix the failing test in calc.py").
		Append(
			at(session.Of(&session.Placement{Backend: "local", Spec: spec})),
			at(session.Of(&session.Placement{Backend: "local", Spec: spec, SandboxID: "sbx-1",
				TreeHash: "sha256:" + hex64('a')})),
			at(session.Of(&session.Decision{Selector: "triage", Choice: "fix", Reason: "a simple bug",
				Candidates: []session.Candidate{{Name: "fix", Description: "patch it"}, {Name: "escalate"}}}).WithNode("0/triage")),
			at(session.System("You are a careful coder.").WithNode(coder)),
			at(session.Of(&session.MemoryEvent{Op: session.MemoryRecall, Store: "local", Query: "calc bug", K: 3,
				Scopes: []string{"project"},
				Hits: []session.MemoryHit{{URI: "memory://project/calc-notes", Score: 0.91, Hash: "sha256:" + hex64('b'),
					Text: "calc.add subtracts", Writer: session.NewID(), Evidence: []session.ChunkID{evidence}, EvidenceKind: "tool_result"}}}).WithNode(coder)),
			at(session.Of(&session.ModelCall{Provider: "scripted", Model: "m-1",
				Usage: session.Usage{InputTokens: 100, OutputTokens: 20, CostUSD: 0.01}}).WithNode(coder)),
			at(session.Assistant("Patching.", session.ToolCall{ID: "call_1", Name: "write_file",
				Args: args(map[string]string{"path": "calc.py", "content": hostile})}).WithNode(coder)),
			at(session.Result(session.ToolResult{CallID: "call_1", Tool: "write_file",
				Args:    args(map[string]string{"path": "calc.py", "content": hostile}),
				Content: "wrote calc.py", Duration: 3 * time.Millisecond, SandboxID: "sbx-1",
				Effects: []session.FileEffect{{Path: "calc.py", Op: session.EffectModified,
					Before: "sha256:" + hex64('c'), After: "sha256:" + hex64('d'), Size: 40,
					Diff: "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"}}}).WithNode(coder)),
			at(session.Of(&session.ModelCall{Provider: "scripted", Model: "m-1",
				Usage: session.Usage{InputTokens: 200, OutputTokens: 30, CostUSD: 0.02}}).WithNode(coder)),
			at(session.Assistant("", session.ToolCall{ID: "call_2", Name: "run_command",
				Args: args(map[string]any{"args": []string{"pytest", "test_calc.py"}})}).WithNode(coder)),
			at(session.Result(session.ToolResult{CallID: "call_2", Tool: "run_command",
				Args:    args(map[string]any{"args": []string{"pytest", "test_calc.py"}}),
				Content: "exit code 0\n--- stdout\n1 passed\n", Duration: time.Second, SandboxID: "sbx-1"}).WithNode(coder)),
			at(session.Assistant("", session.ToolCall{ID: "call_3", Name: "run_code",
				Args: args(map[string]string{"language": "sh", "code": "make test"})}).WithNode(coder)),
			at(session.Result(session.ToolResult{CallID: "call_3", Tool: "run_code",
				Args:    args(map[string]string{"language": "sh", "code": "make test"}),
				Content: "exit code 2\n--- stderr\nno rule\n", SandboxID: "sbx-1",
				Notes: []session.ToolNote{{Kind: session.ToolNoteRedacted, Text: richNote}}}).WithNode(coder)),
			at(session.Of(&session.Approval{Subject: "run_command rm -rf build", CallID: "call_4", Verdict: session.VerdictRequested}).WithNode(coder)),
			at(session.Of(&session.Approval{Subject: "run_command rm -rf build", CallID: "call_4", Verdict: session.VerdictRejected,
				By: "alice", Reason: "too broad"}).WithNode(coder)),
			at(session.Result(session.ToolResult{CallID: "call_4", Tool: "run_command",
				Args:  args(map[string]string{"shell": "rm -rf build"}),
				Error: &session.ToolError{Kind: session.ToolErrRejected, Message: "alice: too broad"}}).WithNode(coder)),
			at(session.Of(&session.MemoryEvent{Op: session.MemoryRemember, Store: "local", URI: "memory://project/calc-fix",
				ContentHash: "sha256:" + hex64('e'), Evidence: []session.ChunkID{evidence}, EvidenceKind: "tool_result"}).WithNode(coder)),
			at(session.Of(&session.Approval{Subject: "patch", Verdict: session.VerdictApproved, By: "bob"}).WithNode(reviewer)),
			at(session.Of(&session.ModelCall{Provider: "scripted", Model: "m-2",
				Usage: session.Usage{InputTokens: 50, OutputTokens: 5}}).WithNode(reviewer)),
			at(session.Fail(session.FailMaxSteps, "reviewer ran out of steps").WithNode(reviewer)),
			at(session.Note("calc.add fixed")),
		)
	return s
}

func hex64(c byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return string(b)
}
