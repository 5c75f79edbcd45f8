package export

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// bigSession returns a run of about n chunks: agent turns with tool calls,
// results with file effects, model calls, and now and then a decision,
// an approval and a memory write.
func bigSession(n int) *session.Session {
	s := session.FromUser("Refactor the project.").To("local", session.Spec{Dir: "/ws"})
	cs := make([]session.Chunk, 0, n)
	for i := 0; len(cs) < n-s.Len(); i++ {
		node := fmt.Sprintf("0/step-%d/agent:coder#%d", i%7, i%3+1)
		id := fmt.Sprintf("call_%d", i)
		cs = append(cs,
			session.Of(&session.ModelCall{Provider: "scripted", Model: "m", Usage: session.Usage{InputTokens: 1000, OutputTokens: 100}}).WithNode(node),
			session.Assistant("Editing a file.", session.ToolCall{ID: id, Name: "run_command", Args: []byte(`{"args":["go","test","./..."]}`)}).WithNode(node),
			session.Result(session.ToolResult{CallID: id, Tool: "run_command", Args: []byte(`{"args":["go","test","./..."]}`),
				Content: "exit code 0\n--- stdout\nok\n", Duration: time.Millisecond, SandboxID: "sbx",
				Effects: []session.FileEffect{{Path: "main.go", Op: session.EffectModified, Diff: "@@ -1 +1 @@\n-a\n+b\n"}}}).WithNode(node),
		)
		switch i % 10 {
		case 0:
			cs = append(cs, session.Of(&session.Decision{Selector: "route", Choice: "a", Candidates: []session.Candidate{{Name: "a"}, {Name: "b"}}}).WithNode(node))
		case 5:
			cs = append(cs, session.Of(&session.MemoryEvent{Op: session.MemoryRemember, URI: "memory://p/x", ContentHash: "sha256:" + hex64('f')}).WithNode(node))
		case 7:
			cs = append(cs, session.Of(&session.Approval{Subject: "patch", Verdict: session.VerdictApproved, By: "ci"}).WithNode(node))
		}
	}
	return s.Append(cs[:n-s.Len()]...)
}

// BenchmarkDossier writes the dossier of a stored 10,000-chunk session.
func BenchmarkDossier(b *testing.B) {
	ctx := context.Background()
	st := openStore(b)
	s := bigSession(10_000)
	commit(b, st, s, "")
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Dossier(ctx, st, s.ID(), dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildDossier measures gathering the data without rendering.
func BenchmarkBuildDossier(b *testing.B) {
	ctx := context.Background()
	st := openStore(b)
	s := bigSession(10_000)
	commit(b, st, s, "")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildDossier(ctx, st, s.ID()); err != nil {
			b.Fatal(err)
		}
	}
}
