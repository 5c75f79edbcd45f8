package openrath

import (
	"bytes"
	"encoding/json"
)

// PromptKey is the lineage_extras key under which Encode writes a system
// prompt, and from which Decode restores it.
//
// The original keeps an agent's system prompt out of its session files: a
// loop's messages are the agent session's rows (the prompt) followed by the
// user session's rows, and a file restored with to_resumable_pair becomes
// the user session, every row of it, with the first system row also taken
// as the agent's prompt unless one is given. A system prompt written as a
// row would therefore reach the model twice when the original continues the
// file. So Encode writes our system chunks (an agent's instructions) as
// header extras instead, [PromptKey, {"row": n, "node": path, "content":
// text}], n being the number of rows before it; a Python user passes
// content as agent_prompt. Decode turns each back into a system chunk
// before row n.
const PromptKey = "rath.system_prompt"

// prompt is the value of a PromptKey extra.
type prompt struct {
	Row     int    `json:"row"`
	Node    string `json:"node,omitempty"`
	Content string `json:"content"`
}

// parsePrompt reads a PromptKey value: an object with a non-negative "row",
// a string "content", an optional "node" and nothing else. Anything else is
// an ordinary extra, kept as it is.
func parsePrompt(raw json.RawMessage) (prompt, bool) {
	var p struct {
		Row     *int    `json:"row"`
		Node    string  `json:"node"`
		Content *string `json:"content"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if jsonType(raw) != "object" || dec.Decode(&p) != nil || p.Row == nil || *p.Row < 0 || p.Content == nil || p.Node == ImportNode {
		return prompt{}, false
	}
	return prompt{Row: *p.Row, Node: p.Node, Content: *p.Content}, true
}
