package session

import (
	"strings"
	"testing"
)

func TestTranscriptProjectsConversation(t *testing.T) {
	call := NewToolCall("c1", "read_file", `{"path":"a.go"}`)
	s := FromSystem("be careful").Append(
		User("fix it"),
		Of(&ModelCall{Provider: "p", Model: "m"}),
		Assistant("reading", call),
		Result(ToolResult{CallID: "c1", Tool: "read_file", Content: "package a"}),
		Result(ToolResult{CallID: "c2", Tool: "run", Error: &ToolError{Kind: ToolErrTimeout, Message: "too slow"}}),
		Of(&Decision{Selector: "route", Candidates: []Candidate{{Name: "x"}}, Choice: "x"}),
		Of(&Approval{Subject: "patch", Verdict: VerdictApproved}),
		Fail(FailMaxSteps, "out of steps"),
		Note("the tests live in a_test.go"),
		Of(&MemoryEvent{Op: MemoryRecall, Query: "tests", Hits: []MemoryHit{{URI: "memory://project/p/tests", Score: 1.5, Text: "run go test"}}}),
		Of(&MemoryEvent{Op: MemoryRemember, URI: "memory://project/p/x"}),
	).To("local", Spec{})
	got := s.Transcript()
	want := []struct {
		role Role
		has  string
	}{
		{RoleSystem, "be careful"},
		{RoleUser, "fix it"},
		{RoleAssistant, "reading"},
		{RoleTool, "package a"},
		{RoleTool, `"error":"timeout"`},
		{RoleSystem, "a_test.go"},
		{RoleUser, "<untrusted source=\"memory\">\n- [memory://project/p/tests] run go test\n</untrusted>"},
	}
	if len(got) != len(want) {
		t.Fatalf("transcript has %d messages, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Role != w.role || !strings.Contains(got[i].Content, w.has) {
			t.Errorf("message %d = %s %q, want %s containing %q", i, got[i].Role, got[i].Content, w.role, w.has)
		}
	}
	if tc := got[2].ToolCalls; len(tc) != 1 || tc[0].Name != "read_file" || string(tc[0].Args) != `{"path":"a.go"}` {
		t.Fatalf("assistant tool calls %+v", tc)
	}
	if got[3].ToolCallID != "c1" || got[3].Name != "read_file" || got[3].Chunk != s.Chunk(4).ID {
		t.Fatalf("tool message %+v", got[3])
	}
}

func TestCompressHidesRangeButKeepsDurable(t *testing.T) {
	s := FromSystem("sys").Append(
		User("u1"), Assistant("a1"), Note("fact"), User("u2"), Assistant("a2"),
	)
	c := Of(&Compression{From: s.Chunk(1).ID, To: s.Chunk(5).ID, Count: 5, Summary: "they talked"})
	s = s.Append(c, User("u3"))
	var roles []string
	for _, m := range s.Transcript() {
		roles = append(roles, string(m.Role)+":"+m.Content)
	}
	got := strings.Join(roles, "|")
	want := "system:sys|user:Summary of 5 earlier chunks:\n<untrusted source=\"compress\">\nthey talked\n</untrusted>|system:fact|user:u3"
	if got != want {
		t.Fatalf("transcript\n got %q\nwant %q", got, want)
	}
	if s.Len() != 8 {
		t.Fatal("compress deleted chunks")
	}
}

func TestLaterCompressionHidesEarlierSummary(t *testing.T) {
	s := FromUser("u1").Append(Assistant("a1"))
	s = s.Append(Of(&Compression{From: s.Chunk(0).ID, To: s.Chunk(1).ID, Count: 2, Summary: "first"}))
	s = s.Append(User("u2"))
	s = s.Append(Of(&Compression{From: s.Chunk(0).ID, To: s.Chunk(3).ID, Count: 4, Summary: "second"}))
	s = s.Append(User("u3"))
	var parts []string
	for _, m := range s.Transcript() {
		parts = append(parts, m.Content)
	}
	got := strings.Join(parts, "|")
	if strings.Contains(got, "first") || !strings.Contains(got, "second") || !strings.HasSuffix(got, "u3") {
		t.Fatalf("transcript %q: want only the second summary, then u3", got)
	}
}

func TestCompressionSurvivesMerge(t *testing.T) {
	base := FromUser("q")
	a := base.Fork().Append(User("a"))
	b := base.Fork().Append(User("b1"), Assistant("b2"))
	b = b.Append(Of(&Compression{From: b.Chunk(1).ID, To: b.Chunk(2).ID, Count: 2, Summary: "b summary"}))
	m, err := a.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, msg := range m.Transcript() {
		parts = append(parts, msg.Content)
	}
	got := strings.Join(parts, "|")
	want := "q|a|Summary of 2 earlier chunks:\n<untrusted source=\"compress\">\nb summary\n</untrusted>"
	if got != want {
		t.Fatalf("merged transcript %q, want %q", got, want)
	}
}
