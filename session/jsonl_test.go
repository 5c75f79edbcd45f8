package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sampleSession(t testing.TB) *Session {
	t.Helper()
	temp := 0.2
	s := FromSystem("You fix Go bugs. <careful> & \u2028 exact").Append(
		User("fix TestFoo — the façade is 🐛"),
		Of(&ModelCall{Provider: "openai", Model: "gpt-x", Params: ModelParams{Temperature: &temp, MaxTokens: 512, Tools: []string{"read_file"}},
			RequestDigest: "sha256:" + strings.Repeat("ab", 32), Usage: Usage{InputTokens: 120, OutputTokens: 30, CostUSD: 0.00042},
			Attempts: []Attempt{{Status: 429, Error: "rate limited", Latency: 5e6}, {Status: 200, Latency: 9e7}}}),
		Assistant("", NewToolCall("c1", "read_file", `{"path": "foo.go", "lines": [1, 2e3]}`), NewToolCall("c2", "noop", "")),
		Result(ToolResult{CallID: "c1", Tool: "read_file", Args: []byte(`{"path":"foo.go"}`), Content: "package foo", Duration: 1500,
			Effects: []FileEffect{{Path: "foo.go", Op: EffectModified, Before: "sha256:00", After: "sha256:11", Diff: "-a\n+b\n"}}}),
		Result(ToolResult{CallID: "c2", Tool: "noop", Error: &ToolError{Kind: ToolErrExecution, Message: "boom"}}),
		Note("durable fact"),
	).To("local", Spec{Dir: "ws", Env: map[string]string{"LANG": "C.UTF-8"}, SecretEnv: []string{"GITHUB_TOKEN"}})
	return s
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	s := sampleSession(t)
	var buf bytes.Buffer
	if err := Encode(&buf, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != s.Len()+2 {
		t.Fatalf("%d lines, want header + %d chunks + trailer", len(lines), s.Len())
	}
	back, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.ID() != s.ID() || back.Head() != s.Head() || back.Len() != s.Len() || back.Usage() != s.Usage() {
		t.Fatalf("round trip changed the session: %v vs %v", back, s)
	}
	if back.Lineage().Kind != s.Lineage().Kind || back.Placement().Backend != "local" {
		t.Fatal("round trip lost lineage or placement")
	}
	var again bytes.Buffer
	if err := Encode(&again, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatal("encode(decode(x)) != x")
	}
}

func TestDecodeErrorsNameTheLine(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, sampleSession(t)); err != nil {
		t.Fatal(err)
	}
	good := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	join := func(ls []string) string { return strings.Join(ls, "\n") + "\n" }
	with := func(i int, f func(string) string) string {
		ls := append([]string(nil), good...)
		ls[i] = f(ls[i])
		return join(ls)
	}
	n := len(good)
	cases := []struct {
		name, input string
		line        int
		sentinel    error
		says        string
	}{
		{"empty", "", 0, ErrCorrupt, "no header"},
		{"not json", with(2, func(string) string { return "{nope" }), 3, ErrCorrupt, "invalid character"},
		{"tampered text", with(2, func(l string) string { return strings.Replace(l, "façade", "facade", 1) }), 3, ErrCorrupt, "hashes to"},
		{"unknown field", with(1, func(l string) string { return strings.Replace(l, `"type":"chunk"`, `"type":"chunk","extra":1`, 1) }), 2, ErrCorrupt, "unknown field"},
		{"bad index", with(3, func(l string) string { return strings.Replace(l, `"index":2`, `"index":7`, 1) }), 4, ErrCorrupt, "index 7, want 2"},
		{"dropped chunk", join(append(append([]string{}, good[:3]...), good[4:]...)), 4, ErrCorrupt, "index 3, want 2"},
		{"no trailer", join(good[:n-1]), n - 1, ErrCorrupt, "truncated"},
		{"wrong count", with(n-1, func(l string) string { return strings.Replace(l, `"count":`, `"count":1`, 1) }), n, ErrCorrupt, "trailer count"},
		{"after trailer", join(append(append([]string{}, good...), good[1])), n + 1, ErrCorrupt, "after the trailer"},
		{"second header", join(append([]string{good[0]}, good...)), 2, ErrCorrupt, "second header"},
		{"chunk first", join(good[1:]), 1, ErrCorrupt, "before the header"},
		{"newer version", with(0, func(l string) string { return strings.Replace(l, `"schema_version":1`, `"schema_version":9`, 1) }), 1, ErrVersion, "schema version 9"},
		{"other format", with(0, func(l string) string { return strings.Replace(l, "rath.session", "other", 1) }), 1, ErrCorrupt, "format"},
		{"blank line", with(2, func(string) string { return "" }), 3, ErrCorrupt, "blank line"},
		{"unknown kind", with(2, func(l string) string { return strings.Replace(l, `"kind":"user"`, `"kind":"wizard"`, 1) }), 3, ErrCorrupt, "wizard"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.input))
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want *DecodeError", err)
			}
			if de.Line != tc.line || !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %q (line %d), want line %d, %v, containing %q", err, de.Line, tc.line, tc.sentinel, tc.says)
			}
		})
	}
}

func TestDecodeFileNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte("{\"type\":\"header\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := DecodeFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":1: ") {
		t.Fatalf("err = %v, want it to start with %s:1:", err, path)
	}
}

func TestDecodeLongLines(t *testing.T) {
	big := strings.Repeat("x", 3<<20) // larger than the reader's buffer
	s := FromUser(big)
	var buf bytes.Buffer
	if err := Encode(&buf, s); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&buf)
	if err != nil || back.Chunk(0).User.Text != big {
		t.Fatalf("long line: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	_ = Encode(&buf, sampleSession(f))
	f.Add(buf.Bytes())
	buf.Reset()
	_ = Encode(&buf, New())
	f.Add(buf.Bytes())
	f.Add([]byte(`{"type":"header","format":"rath.session","schema_version":1,"id":"ses_01JD0000000000000000000000","lineage":{"parents":[],"op":"x","kind":"leaf"}}` + "\n" + `{"type":"trailer","count":0}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(bytes.NewReader(data))
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || !(errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion)) {
				t.Fatalf("error %v is not a DecodeError wrapping ErrCorrupt/ErrVersion", err)
			}
			return
		}
		if err := s.Verify(); err != nil {
			t.Fatalf("decoded session does not verify: %v", err)
		}
		var out bytes.Buffer
		if err := Encode(&out, s); err != nil {
			t.Fatal(err)
		}
		back, err := Decode(&out)
		if err != nil || back.Head() != s.Head() {
			t.Fatalf("re-decode: %v", err)
		}
	})
}
