package session

import (
	"fmt"
	"strings"
)

// Role is the speaker of a transcript message.
type Role string

// Transcript roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of what a model sees. Providers translate messages to
// their wire formats; the session never stores provider types.
type Message struct {
	Role            Role        `json:"role"`
	Content         string      `json:"content,omitempty"`
	Reasoning       string      `json:"reasoning,omitempty"`
	ReasoningBlocks []Reasoning `json:"reasoning_blocks,omitempty"`
	ToolCalls       []ToolCall  `json:"tool_calls,omitempty"`
	// ToolCallID and Name identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
	// Notes are a tool result's notes (ToolResult.Notes): never part of
	// Content, which is the tool's own output. A provider that shows them
	// sends them as a separate, labelled part after the content (NotesPart):
	// a model should know when a result was cut, or its server started
	// again (what it held before is gone), or a value scrubbed from it.
	Notes []ToolNote `json:"notes,omitempty"`
	// Chunk is the chunk the message was projected from.
	Chunk ChunkID `json:"chunk,omitempty"`
	// Trust is whose words the content is, and Source the kind of chunk it
	// was projected from: both are set on every message a session projects,
	// and left empty on one built by hand. A message whose Trust is not
	// Trusted is never RoleSystem.
	Trust  Trust `json:"trust,omitempty"`
	Source Kind  `json:"source,omitempty"`
}

// Transcript returns the model's view of the session, in order: system, user
// and assistant turns with their tool calls, tool results, durable notes and
// recalled memory. Evidence-only chunks (model calls, placements, decisions,
// approvals, errors) are left out. A compress chunk hides the chunks of its
// range, except durable-tier ones, and shows its summary where the range
// began; a compression hidden by a later one shows nothing. Transcript is
// O(n) in the session's length.
//
// Every message is labelled with its Trust and Source. Only instructions
// and notes are system messages; recalled memory and compression summaries
// are untrusted and come as user messages that quote them (see Quote), and
// tool results as tool messages.
func (s *Session) Transcript() []Message {
	return s.AppendTranscript(make([]Message, 0, s.t.n))
}

// AppendTranscript appends the session's transcript to dst and returns the
// extended slice: Transcript into a slice of the caller's, for one that
// keeps appending to it (an agent run adds each step's messages).
func (s *Session) AppendTranscript(dst []Message) []Message {
	out := dst
	hidden, anchors := s.compressions()
	s.t.each(0, func(i int, e *entry) bool {
		for _, c := range anchors[i] {
			out = append(out, c.body.message(c.id))
		}
		if hidden != nil && hidden[i] && e.Tier != TierDurable {
			return true
		}
		if m, ok := e.Chunk.Message(); ok {
			out = append(out, m)
		}
		return true
	})
	return out
}

type anchored struct {
	id   ChunkID
	body *Compression
}

// compressions resolves the compress chunks of the chain: which indexes they
// hide and which summaries to show at which index. Both are nil when the
// session has no compress chunk, so the common case allocates nothing.
func (s *Session) compressions() (hidden []bool, anchors map[int][]anchored) {
	type comp struct {
		at   int
		id   ChunkID
		body *Compression
	}
	var comps []comp
	s.t.each(0, func(i int, e *entry) bool {
		if e.Compress != nil {
			comps = append(comps, comp{i, e.ID, e.Compress})
		}
		return true
	})
	if len(comps) == 0 {
		return nil, nil
	}
	// Ranges name chunks by id; a chunk merged in from another branch is also
	// found by its origin id.
	pos := make(map[ChunkID]int, 2*len(comps))
	for _, c := range comps {
		pos[c.body.From], pos[c.body.To] = -1, -1
	}
	s.t.each(0, func(i int, e *entry) bool {
		for _, id := range [2]ChunkID{e.ID, e.Origin} {
			if p, ok := pos[id]; ok && p < 0 {
				pos[id] = i
			}
		}
		return true
	})
	type span struct{ lo, hi, k int }
	spans := make([]span, 0, len(comps))
	depth := make([]int, s.t.n+1)
	for _, c := range comps {
		lo, hi := pos[c.body.From], pos[c.body.To]
		if lo < 0 || hi < lo || hi >= c.at {
			continue // a range that is not behind this chunk hides nothing
		}
		// Keep the resolved compressions at the front of comps.
		spans = append(spans, span{lo, hi, len(spans)})
		comps[len(spans)-1] = c
		depth[lo]++
		depth[hi+1]--
	}
	hidden = make([]bool, s.t.n)
	for i, d := 0, 0; i < s.t.n; i++ {
		d += depth[i]
		hidden[i] = d > 0
	}
	anchors = make(map[int][]anchored, len(spans))
	for _, sp := range spans {
		c := comps[sp.k]
		if hidden[c.at] {
			continue // summarised away by a later compression
		}
		anchors[sp.lo] = append(anchors[sp.lo], anchored{c.id, c.body})
	}
	return hidden, anchors
}

// Message returns the message c contributes to the model's view, and
// false for an evidence-only chunk. It does not know about compression: a
// chunk a later compress chunk hides still has its message (Transcript
// leaves it out). Appending a chunk that is not a compress chunk adds
// exactly its Message to the transcript, which lets a caller keep a
// growing session's transcript without projecting it again.
//
// The message is labelled with the chunk's trust (Kind.Trust) and kind.
// Instructions and notes are system messages; a user chunk a user message;
// a tool result a tool message; a memory recall, which is untrusted, a user
// message quoting the hits (Quote) under the heading "Recalled from
// memory:".
func (c Chunk) Message() (Message, bool) {
	switch c.Kind {
	case KindSystem:
		return Message{Role: RoleSystem, Content: c.System.Text, Chunk: c.ID, Trust: Trusted, Source: KindSystem}, true
	case KindUser:
		return Message{Role: RoleUser, Content: c.User.Text, Chunk: c.ID, Trust: TrustUser, Source: KindUser}, true
	case KindNote:
		return Message{Role: RoleSystem, Content: c.Note.Text, Chunk: c.ID, Trust: Trusted, Source: KindNote}, true
	case KindAssistant:
		t := c.Assistant
		return Message{Role: RoleAssistant, Content: t.Text, Reasoning: t.Reasoning,
			ReasoningBlocks: t.ReasoningBlocks, ToolCalls: t.ToolCalls, Chunk: c.ID, Trust: TrustModel, Source: KindAssistant}, true
	case KindToolResult:
		r := c.ToolResult
		return Message{Role: RoleTool, Content: r.ModelContent(), ToolCallID: r.CallID, Name: r.Tool, Notes: r.Notes, Chunk: c.ID,
			Trust: Untrusted, Source: KindToolResult}, true
	case KindMemory:
		if c.Memory.Op != MemoryRecall || len(c.Memory.Hits) == 0 {
			return Message{}, false
		}
		var hits strings.Builder
		for i, h := range c.Memory.Hits {
			if i > 0 {
				hits.WriteByte('\n')
			}
			fmt.Fprintf(&hits, "- [%s] %s", h.URI, h.Text)
		}
		return Message{Role: RoleUser, Content: Quote("Recalled from memory:", KindMemory, hits.String()), Chunk: c.ID,
			Trust: Untrusted, Source: KindMemory}, true
	}
	return Message{}, false
}

// message is the summary a compress chunk shows where its range began: a
// user message quoting it, untrusted (a model wrote it from content that
// may be).
func (c *Compression) message(id ChunkID) Message {
	return Message{Role: RoleUser, Content: Quote(fmt.Sprintf("Summary of %d earlier chunks:", c.Count), KindCompress, c.Summary),
		Chunk: id, Trust: Untrusted, Source: KindCompress}
}
