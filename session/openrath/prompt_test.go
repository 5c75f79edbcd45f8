package openrath

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// pyMessage is a message as the original sends it to a model.
type pyMessage struct{ Role, Content string }

// resumed returns the messages the original sends on the first model call
// when it continues a session file (openrath-python.md §1.4 and §2.2):
// load_session reads the rows; to_resumable_pair makes the user session of
// every row, and the agent session of agentPrompt, or, when that is nil, of
// the first system row if there is one; the loop sends the agent session's
// rows, then the user session's.
func resumed(t *testing.T, file []byte, agentPrompt *string) []pyMessage {
	t.Helper()
	var user []pyMessage
	for _, l := range lines(file) {
		var rec struct {
			RecordType string `json:"record_type"`
			Kind       string `json:"kind"`
			Payload    struct {
				Content *string `json:"content"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.RecordType != "chunk" {
			continue
		}
		m := pyMessage{Role: rec.Kind}
		if rec.Kind == "tool_result" {
			m.Role = "tool"
		}
		if rec.Payload.Content != nil {
			m.Content = *rec.Payload.Content
		}
		user = append(user, m)
	}
	var agent []pyMessage
	switch {
	case agentPrompt != nil:
		agent = []pyMessage{{"system", *agentPrompt}}
	default:
		for _, m := range user {
			if m.Role == "system" {
				agent = []pyMessage{m}
				break
			}
		}
	}
	return append(agent, user...)
}

// count is how many of ms are system messages with this content.
func count(ms []pyMessage, content string) int {
	n := 0
	for _, m := range ms {
		if m.Role == "system" && m.Content == content {
			n++
		}
	}
	return n
}

// agentRun is a session as two agents in sequence leave it: each adds its
// instructions as a system chunk under its node path, then works.
func agentRun() *session.Session {
	call := session.NewToolCall("c1", "read_file", `{"path":"a.txt"}`)
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	return session.FromUser("Summarise a.txt, then review the summary.").Append(
		session.System("You are a careful summariser.").WithNode("0/agent:writer#1").WithTime(at),
		session.Assistant("", call).WithNode("0/agent:writer#1"),
		session.Result(session.ToolResult{CallID: "c1", Tool: "read_file", Args: call.Args, Content: "alpha beta"}).WithNode("0/agent:writer#1"),
		session.Note("a.txt is two words long"),
		session.Assistant("a.txt says alpha beta.").WithNode("0/agent:writer#1"),
		session.System("You review summaries.").WithNode("1/agent:reviewer#1").WithTime(at),
		session.Assistant("The summary is right.").WithNode("1/agent:reviewer#1"),
	)
}

// TestPromptNotSentTwice exports a rath run and continues it the way the
// original does: no system prompt reaches the model twice, and the prompt
// the header carries, passed as agent_prompt, reaches it exactly once.
func TestPromptNotSentTwice(t *testing.T) {
	// The check can fail: a file with the prompt as a row (as the original
	// would write a prompt session) sends it twice when continued.
	withRow := readFixture(t, "basic.jsonl")
	if n := count(resumed(t, withRow, nil), "You are a careful coding agent."); n != 2 {
		t.Fatalf("a system row is sent %d times when continued, want 2 (the check is blind)", n)
	}

	s := agentRun()
	out := encodeBytes(t, s)
	prompts := headerPrompts(t, out)
	if len(prompts) != 2 || prompts[0].Content != "You are a careful summariser." || prompts[1].Content != "You review summaries." {
		t.Fatalf("header prompts %+v, want both agents' instructions", prompts)
	}
	// Without agent_prompt the original has none (and, its bug 15, takes
	// the first system row, here the note, as the prompt, repeating it).
	for _, p := range prompts {
		if n := count(resumed(t, out, nil), p.Content); n != 0 {
			t.Errorf("prompt %q sent %d times without agent_prompt, want 0", p.Content, n)
		}
	}
	for _, p := range prompts {
		if n := count(resumed(t, out, &p.Content), p.Content); n != 1 {
			t.Errorf("prompt %q passed as agent_prompt is sent %d times, want once", p.Content, n)
		}
	}
	// The note is a system row, as the original's memory rows are.
	if n := count(resumed(t, out, &prompts[1].Content), "a.txt is two words long"); n != 1 {
		t.Errorf("note sent %d times, want once", n)
	}

	// Back here, each prompt is where it was, under its node.
	back := decodeBytes(t, out)
	if got, want := noIDs(back.Transcript()), noIDs(s.Transcript()); !equalMessages(got, want) {
		t.Errorf("transcript after the round trip:\n got %+v\nwant %+v", got, want)
	}
	var nodes []string
	for _, c := range back.All() {
		if c.System != nil && c.Node != ImportNode { // the note came back as a system row
			nodes = append(nodes, c.Node)
		}
	}
	if len(nodes) != 2 || nodes[0] != "0/agent:writer#1" || nodes[1] != "1/agent:reviewer#1" {
		t.Errorf("system chunk nodes %v, want the agents'", nodes)
	}
}

// headerPrompts returns the PromptKey extras of a file's header.
func headerPrompts(t *testing.T, file []byte) []prompt {
	t.Helper()
	var h struct {
		Extras [][2]json.RawMessage `json:"lineage_extras"`
	}
	if err := json.Unmarshal([]byte(lines(file)[0]), &h); err != nil {
		t.Fatal(err)
	}
	var out []prompt
	for _, pair := range h.Extras {
		var key string
		_ = json.Unmarshal(pair[0], &key)
		if p, ok := parsePrompt(pair[1]); ok && key == PromptKey {
			out = append(out, p)
		}
	}
	return out
}

func equalMessages(a, b []session.Message) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestPromptExtraShapes checks which PromptKey values are prompts: only
// the shape Encode writes; anything else stays an ordinary extra.
func TestPromptExtraShapes(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"row":0,"content":"x"}`:                             true,
		`{"row":3,"node":"0/agent:a#1","content":""}`:         true,
		`{"row":-1,"content":"x"}`:                            false,
		`{"content":"x"}`:                                     false,
		`{"row":0}`:                                           false,
		`{"row":0,"content":"x","extra":1}`:                   false,
		`{"row":0,"content":"x","node":"` + ImportNode + `"}`: false,
		`"You are helpful."`:                                  false,
		`null`:                                                false,
	} {
		if _, got := parsePrompt(json.RawMessage(raw)); got != want {
			t.Errorf("parsePrompt(%s) = %v, want %v", raw, got, want)
		}
	}
	// The edge file's ["rath.system_prompt", "not one of ours"] survives
	// as an extra (TestRoundTripSemantic checks it is written back).
	s := decodeBytes(t, readFixture(t, "edge_closed.jsonl"))
	if got := s.Lineage().Extras[ExtraPrefix+PromptKey]; got != "not one of ours" {
		t.Errorf("extra %s = %q", PromptKey, got)
	}
	for _, c := range s.All() {
		if c.System != nil && c.Node != ImportNode {
			t.Errorf("a prompt chunk %q was made from an ordinary extra", c.System.Text)
		}
	}
}
