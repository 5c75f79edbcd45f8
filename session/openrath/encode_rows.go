package openrath

import (
	"fmt"

	"github.com/openrath/rath/session"
)

// rowsOut returns the chunk records of s's transcript, and the system
// prompts left out of them (see PromptKey).
func rowsOut(s *session.Session) ([]chunkRecord, []prompt, error) {
	// The chunks a message needs more of than the message says: system
	// chunks (made by Decode or not) and tool results (their error).
	chunks := map[session.ChunkID]session.Chunk{}
	for _, c := range s.All() {
		if c.Kind == session.KindSystem || c.Kind == session.KindToolResult {
			chunks[c.ID] = c
		}
	}
	var rows []chunkRecord
	var prompts []prompt
	for _, m := range s.Transcript() {
		c := chunks[m.Chunk]
		if c.System != nil && c.Node != ImportNode {
			prompts = append(prompts, prompt{Row: len(rows), Node: c.Node, Content: c.System.Text})
			continue
		}
		payload, kind, err := payloadOut(m, c.ToolResult)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, chunkRecord{RecordType: "chunk", Index: len(rows), Kind: kind, Payload: payload})
	}
	return rows, prompts, nil
}

// payloadOut maps one transcript message to a chunk record's kind and
// payload; r is the tool result a tool message was projected from.
func payloadOut(m session.Message, r *session.ToolResult) (payload any, kind string, err error) {
	switch m.Role {
	case session.RoleSystem:
		return textPayload{m.Content}, "system", nil
	case session.RoleUser:
		return textPayload{m.Content}, "user", nil
	case session.RoleAssistant:
		p := assistantPayload{Content: nullable(m.Content)}
		for _, tc := range m.ToolCalls {
			p.ToolCalls = append(p.ToolCalls, toolCall{
				ID: tc.ID, Type: "function",
				Function: function{Name: tc.Name, Arguments: tc.ArgsString()},
			})
		}
		return p, "assistant", nil
	case session.RoleTool:
		content := m.Content
		if r != nil {
			content = resultOut(r)
		}
		return toolResultPayload{m.ToolCallID, m.Name, content}, "tool_result", nil
	}
	return nil, "", fmt.Errorf("%w: transcript role %q has no OpenRath chunk kind", session.ErrInvalid, m.Role)
}
