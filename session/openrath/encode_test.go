package openrath

import (
	"bytes"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

func TestEncodeNative(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 600000000, time.UTC)
	call := session.NewToolCall("c1", "grep", `{"pattern": "TODO"}`)
	s := session.FromSystem("be brief").Fork().
		To("local", session.Spec{Dir: "/w", Env: map[string]string{"LANG": "C"}, SecretEnv: []string{"GITHUB_TOKEN"}, Timeout: 90 * time.Second}).
		Append(
			session.User("find the TODOs <now> & report").WithTime(t0),
			session.Of(&session.ModelCall{Provider: "openai", Model: "gpt-x", Usage: session.Usage{InputTokens: 100, OutputTokens: 20}}),
			session.Assistant("", call),
			session.Result(session.ToolResult{CallID: "c1", Tool: "grep", Args: call.Args, Content: "main.go:3: TODO"}),
			session.Note("the repo is small"),
			session.Of(&session.Decision{Selector: "router", Candidates: []session.Candidate{{Name: "done"}}, Choice: "done"}),
			session.Of(&session.ModelCall{Provider: "openai", Model: "gpt-x", Usage: session.Usage{InputTokens: 150, OutputTokens: 30, CacheReadTokens: 7}}),
			session.Assistant("One TODO, in main.go.\u0085Done."),
		)
	out := encodeBytes(t, s)
	if bytes.Contains(out, []byte("\u0085")) {
		t.Error("output holds a raw U+0085, which Python's splitlines breaks lines at")
	}
	recs := records(t, out)

	var types, kinds []string
	for _, r := range recs {
		types = append(types, r["record_type"].(string))
		if r["record_type"] == "chunk" {
			kinds = append(kinds, r["kind"].(string))
			if int(r["index"].(float64)) != len(kinds)-1 {
				t.Errorf("chunk %d has index %v", len(kinds)-1, r["index"])
			}
		}
	}
	wantTypes := []string{"header", "chunk", "chunk", "chunk", "chunk", "chunk", "trailer"}
	if !slices.Equal(types, wantTypes) {
		t.Fatalf("record types = %v, want %v", types, wantTypes)
	}
	// The system prompt is a header extra, not a row. The note is
	// model-visible: it becomes a system row. The model calls, the decision
	// and the placement are evidence only.
	if want := []string{"user", "assistant", "tool_result", "system", "assistant"}; !slices.Equal(kinds, want) {
		t.Errorf("chunk kinds = %v, want %v", kinds, want)
	}
	if got := recs[4]["payload"].(map[string]any)["content"]; got != "the repo is small" {
		t.Errorf("note row content = %v", got)
	}
	if got := recs[1]["payload"].(map[string]any)["content"]; got != "find the TODOs <now> & report" {
		t.Errorf("user row content = %v (HTML must not be escaped)", got)
	}

	asst := recs[2]["payload"].(map[string]any)
	if asst["content"] != nil {
		t.Errorf("assistant without text: content = %v, want null", asst["content"])
	}
	calls := asst["tool_calls"].([]any)
	wantCall := map[string]any{"id": "c1", "type": "function",
		"function": map[string]any{"name": "grep", "arguments": `{"pattern":"TODO"}`}}
	if len(calls) != 1 || !reflect.DeepEqual(calls[0], wantCall) {
		t.Errorf("tool_calls = %v, want [%v]", calls, wantCall)
	}
	if got := recs[5]["payload"].(map[string]any)["tool_calls"]; got != nil {
		t.Errorf("assistant without calls: tool_calls = %v, want null", got)
	}
	wantResult := map[string]any{"tool_call_id": "c1", "name": "grep", "content": "main.go:3: TODO"}
	if got := recs[3]["payload"]; !reflect.DeepEqual(got, wantResult) {
		t.Errorf("tool_result payload = %v, want %v", got, wantResult)
	}

	h := recs[0]
	uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	if id, _ := h["id"].(string); !uuidRE.MatchString(id) || id != UUIDOf(s.ID()) {
		t.Errorf("header id = %v, want the UUID of %s", h["id"], s.ID())
	}
	parents := h["parent_session_ids"].([]any)
	if want := UUIDOf(s.Lineage().Parents[0]); len(parents) != 1 || parents[0] != want {
		t.Errorf("parent_session_ids = %v, want [%s]", parents, want)
	}
	if h["lineage_kind"] != "op_fork" || h["lineage_operator"] != "fork" || h["schema_version"] != 1.0 {
		t.Errorf("header lineage/version = %v %v %v", h["lineage_kind"], h["lineage_operator"], h["schema_version"])
	}
	wantExtras := []any{[]any{PromptKey, map[string]any{"row": 0.0, "content": "be brief"}}}
	if !reflect.DeepEqual(h["lineage_extras"], wantExtras) {
		t.Errorf("lineage_extras = %#v, want %#v", h["lineage_extras"], wantExtras)
	}
	if want := isoTime(s.Chunk(0).Time); h["created_at"] != want {
		t.Errorf("created_at = %v, want %v", h["created_at"], want)
	}
	wantSpec := map[string]any{"image": nil, "entrypoint": nil, "env": map[string]any{"LANG": "C"},
		"timeout_seconds": 90.0, "working_dir": "/w"}
	if h["sandbox_backend"] != "local" || !reflect.DeepEqual(h["sandbox_spec"], wantSpec) || h["sandbox_handle_id"] != nil {
		t.Errorf("sandbox = %v %v %v, want local %v", h["sandbox_backend"], h["sandbox_spec"], h["sandbox_handle_id"], wantSpec)
	}

	tr := recs[len(recs)-1]
	wantUsage := map[string]any{"prompt_tokens": 250.0, "completion_tokens": 50.0, "total_tokens": 300.0}
	if !reflect.DeepEqual(tr["cumulative_usage"], wantUsage) || tr["final_chunk_count"] != 5.0 {
		t.Errorf("trailer = %v, want usage %v and 5 chunks", tr, wantUsage)
	}
	last, _ := s.Last()
	if tr["closed_at"] != isoTime(last.Time) {
		t.Errorf("closed_at = %v, want %v", tr["closed_at"], isoTime(last.Time))
	}

	// And it reads back, as the same session with the prompt in its place.
	back := decodeBytes(t, out)
	if back.ID() != s.ID() || !slices.Equal(back.Lineage().Parents, s.Lineage().Parents) {
		t.Errorf("re-imported %s %v, want %s %v", back.ID(), back.Lineage().Parents, s.ID(), s.Lineage().Parents)
	}
	if got, want := noIDs(back.Transcript()), noIDs(s.Transcript()); !reflect.DeepEqual(got, want) {
		t.Errorf("re-imported transcript:\n got %+v\nwant %+v", got, want)
	}
	if u := back.Usage(); u.InputTokens != 250 || u.OutputTokens != 50 {
		t.Errorf("re-imported usage = %v", u)
	}
}

func TestEncodeEmpty(t *testing.T) {
	recs := records(t, encodeBytes(t, session.New()))
	if len(recs) != 2 || recs[0]["record_type"] != "header" || recs[1]["record_type"] != "trailer" {
		t.Fatalf("records = %v, want header and trailer", recs)
	}
	if recs[1]["cumulative_usage"] != nil || recs[1]["final_chunk_count"] != 0.0 || recs[0]["sandbox_spec"] != nil {
		t.Errorf("records = %v", recs)
	}
	if _, err := time.Parse(time.RFC3339Nano, recs[0]["created_at"].(string)); err != nil {
		t.Errorf("created_at: %v", err)
	}
	if err := Encode(&bytes.Buffer{}, nil); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("nil session: err = %v, want session.ErrInvalid", err)
	}
}
