package session

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden test vectors in testdata/vectors")

// vector is one published test vector: a chunk, its canonical encoding (the
// exact bytes hashed) and its id. The vectors form a chain, in order.
type vector struct {
	Name      string          `json:"name"`
	Chunk     json.RawMessage `json:"chunk"`
	Canonical string          `json:"canonical"`
	ID        ChunkID         `json:"id"`
}

// vectorChunks are the chunks behind the vectors: every kind, non-ASCII
// text, characters JSON escapes, floats, raw JSON arguments.
func vectorChunks() []struct {
	name string
	c    Chunk
} {
	at := func(sec int) time.Time { return time.Date(2026, 11, 21, 12, 0, sec, 123456000, time.UTC) }
	temp, top := 0.7, 1e-7
	return []struct {
		name string
		c    Chunk
	}{
		{"system", System("You are careful.\nAnswer in <b>bold</b> & \"quotes\".").WithTime(at(0))},
		{"user-unicode", User("Größe? 价格? 🐛 \u2028 \u0007 tab\t").WithTime(at(1)).WithNode("intake")},
		{"model-call", Of(&ModelCall{Provider: "openai", Model: "gpt-x", Params: ModelParams{Temperature: &temp, TopP: &top, MaxTokens: 256, Tools: []string{"read_file"}},
			RequestDigest: "sha256:" + strings.Repeat("0f", 32), Response: ModelOutput{Text: "", FinishReason: "tool_calls"},
			Usage: Usage{InputTokens: 1200, OutputTokens: 35, CacheReadTokens: 1024, CostUSD: 0.0031}, Attempts: []Attempt{{Status: 200, Latency: 812 * time.Millisecond}},
			Latency: 815 * time.Millisecond}).WithTime(at(2)).WithNode("coder#1")},
		{"assistant-tool-calls", Assistant("", NewToolCall("call_1", "read_file", `{"path": "a.go", "range": [1, 1e2], "b": true, "a": null}`), NewToolCall("call_2", "list", ""), NewToolCall("call_3", "bad", "{not json")).WithTime(at(3)).WithNode("coder#1")},
		{"tool-result", Result(ToolResult{CallID: "call_1", Tool: "read_file", Args: json.RawMessage(`{"path":"a.go"}`), Content: "package a\n", Duration: 1500 * time.Microsecond, SandboxID: "sbx_1",
			Effects: []FileEffect{{Path: "a.go", Op: EffectModified, Before: "sha256:aa", After: "sha256:bb", Size: 10, Diff: "@@ -1 +1 @@\n-a\n+b\n"}}}).WithTime(at(4)).WithNode("coder#1/read_file")},
		{"tool-error", Result(ToolResult{CallID: "call_3", Tool: "bad", Error: &ToolError{Kind: ToolErrInvalidArgs, Message: "arguments are not JSON"}}).WithTime(at(5))},
		{"memory-recall", Of(&MemoryEvent{Op: MemoryRecall, Store: "local", Query: "flaky test", Scopes: []string{"project/rath"}, K: 3,
			Hits: []MemoryHit{{URI: "memory://project/rath/notes/flaky", Score: 2.25, Hash: "sha256:cc", Text: "retry with -count=1"}}}).WithTime(at(6))},
		{"placement", Of(&Placement{Backend: "bwrap", Spec: Spec{Dir: "ws", Env: map[string]string{"LANG": "C.UTF-8", "A": "1"}, SecretEnv: []string{"GITHUB_TOKEN"}, Timeout: 30 * time.Second, CPUs: 1.5}, SandboxID: "sbx_1"}).WithTime(at(7))},
		{"decision", Of(&Decision{Selector: "router", Candidates: []Candidate{{Name: "fix", Description: "patch code"}, {Name: "ask"}}, Choice: "fix", Reason: "a test fails"}).WithTime(at(8))},
		{"approval", Of(&Approval{Subject: "patch", CallID: "call_9", Verdict: VerdictRejected, By: "validator:tests", Reason: "2 tests fail"}).WithTime(at(9))},
		{"note", Note("The repo uses Go 1.26.").WithTime(at(10))},
		{"error", Fail(FailMaxSteps, "stopped after 8 steps").WithTime(at(11))},
		// Added with trust labels: a model call with the evidence of its
		// request's parts, continuing an earlier request.
		{"model-call-parts", Of(&ModelCall{Provider: "anthropic", Model: "claude-x", RequestDigest: "sha256:" + strings.Repeat("1e", 32),
			Parts: &RequestParts{Base: "sha256:" + strings.Repeat("0f", 32), From: 2, List: []Part{
				{Role: RoleTool, Trust: Untrusted, Source: KindToolResult, Chunk: ChunkID("sha256:" + strings.Repeat("ab", 32))},
				{Role: RoleUser, Trust: Untrusted, Source: KindMemory, Chunk: ChunkID("sha256:" + strings.Repeat("cd", 32))},
				{Role: RoleSystem, Trust: Trusted, Source: KindNote, Chunk: ChunkID("sha256:" + strings.Repeat("ef", 32))},
				{Role: RoleUser},
			}},
			Response: ModelOutput{Text: "Done.", FinishReason: "stop"}, Usage: Usage{InputTokens: 900, OutputTokens: 3},
			Latency: 400 * time.Millisecond}).WithTime(at(12)).WithNode("coder#1")},
	}
}

func TestGoldenVectors(t *testing.T) {
	var vs []vector
	var parent ChunkID
	s, _ := Assemble(ID("ses_01JDZZ8Q5P0000000000000000"), Lineage{Op: "vectors", Kind: LineageLeaf}, nil)
	for _, vc := range vectorChunks() {
		c, err := Seal(parent, vc.c)
		if err != nil {
			t.Fatalf("%s: %v", vc.name, err)
		}
		noID := c
		noID.ID = ""
		raw, _ := json.Marshal(noID)
		canon, err := CanonicalJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		var full bytes.Buffer
		enc := json.NewEncoder(&full)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(c)
		vs = append(vs, vector{Name: vc.name, Chunk: bytes.TrimSpace(full.Bytes()), Canonical: string(canon), ID: c.ID})
		parent = c.ID
		s = s.Append(c)
	}
	var session bytes.Buffer
	if err := Encode(&session, s); err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	enc := json.NewEncoder(&pretty)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(vs); err != nil {
		t.Fatal(err)
	}
	got := pretty.Bytes()
	chunksPath, sessionPath := filepath.Join("testdata", "vectors", "chunks.json"), filepath.Join("testdata", "vectors", "session.jsonl")
	if *update {
		_ = os.MkdirAll(filepath.Dir(chunksPath), 0o755)
		if err := os.WriteFile(chunksPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sessionPath, session.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(chunksPath)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoldenVectors -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the encoding of chunks changed: %s no longer matches. Every stored chain would stop verifying. "+
			"If the change is intended, bump SchemaVersion and run with -update.", chunksPath)
	}
	wantSession, err := os.ReadFile(sessionPath)
	if err != nil || !bytes.Equal(session.Bytes(), wantSession) {
		t.Fatalf("%s differs from the encoding of the vectors (%v)", sessionPath, err)
	}
	// The published ids must also verify from the stored file alone.
	back, err := DecodeFile(sessionPath)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if back.Chunk(i).ID != v.ID {
			t.Fatalf("vector %s: decoded id %s, want %s", v.Name, back.Chunk(i).ID, v.ID)
		}
	}
}

// TestVectorsVerifyInPython checks that docs/canonical-encoding.md is precise
// enough for another language: the independent Python verifier shipped in
// docs/ accepts the vector chain and rejects a tampered copy.
func TestVectorsVerifyInPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: skipping the cross-language verification of the test vectors")
	}
	script := filepath.Join("..", "docs", "verify_chain.py")
	good := filepath.Join("testdata", "vectors", "session.jsonl")
	if out, err := exec.Command(py, script, good).CombinedOutput(); err != nil {
		t.Fatalf("python verifier rejected the vectors: %v\n%s", err, out)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "tampered.jsonl")
	tampered := bytes.Replace(data, []byte("stopped after 8 steps"), []byte("stopped after 9 steps"), 1)
	if bytes.Equal(tampered, data) {
		t.Fatal("tampering did not change the file")
	}
	if err := os.WriteFile(bad, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, script, bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "chunk 11") {
		t.Fatalf("python verifier accepted a tampered chain or did not name chunk 11: %v\n%s", err, out)
	}
}
