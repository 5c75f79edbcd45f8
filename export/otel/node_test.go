package otel

import (
	"testing"

	"github.com/openrath/rath/session"
)

func TestAgentNode(t *testing.T) {
	for _, tc := range []struct {
		node, key, name, parent string
	}{
		{"0/triage/branch-1/agent:coder#1", "0/triage/branch-1/agent:coder#1", "coder", ""},
		{"agent:a#2", "agent:a#2", "a", ""},
		{"0/agent:lead#1/agent:coder#3", "0/agent:lead#1/agent:coder#3", "coder", "0/agent:lead#1"},
		{"0/agent:lead#1/tool:x", "0/agent:lead#1", "lead", ""},
		{"0/agent:plain", "0/agent:plain", "plain", ""},
		{"0/selector:triage#1", "", "", ""},
		{"0/agent:#1", "", "", ""},
		{"", "", "", ""},
	} {
		key, name, ok := agentNode(tc.node)
		if key != tc.key || name != tc.name || ok != (tc.key != "") {
			t.Errorf("agentNode(%q) = %q, %q, %v; want %q, %q", tc.node, key, name, ok, tc.key, tc.name)
		}
		if ok {
			if p := parentAgent(key); p != tc.parent {
				t.Errorf("parentAgent(%q) = %q, want %q", key, p, tc.parent)
			}
		}
	}
}

func TestIDSet(t *testing.T) {
	s := newIDSet[session.ChunkID](2)
	s.add("a")
	s.add("b")
	s.add("a") // already there: no eviction
	if !s.has("a") || !s.has("b") {
		t.Fatal("set lost an id below its capacity")
	}
	s.add("c") // evicts the oldest, a
	if s.has("a") || !s.has("b") || !s.has("c") {
		t.Errorf("after overflow: a=%v b=%v c=%v, want false true true", s.has("a"), s.has("b"), s.has("c"))
	}
	s.add("")
	if s.has("") {
		t.Error("the empty id was added")
	}
}
