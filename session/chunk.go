package session

import (
	"fmt"
	"time"
)

// Chunk is one entry of a session's chain. Exactly one body field is set, the
// one named by Kind. ID and Parent are filled in by Append; Time too if zero.
//
// The JSON form of a chunk (its field tags) is also its hashed form: see
// docs/canonical-encoding.md.
type Chunk struct {
	ID     ChunkID `json:"id,omitempty"`
	Parent ChunkID `json:"parent,omitempty"`
	// Origin is the id this chunk had on another branch before Merge
	// re-chained it onto this one; empty for chunks appended here.
	Origin ChunkID `json:"origin,omitempty"`
	Kind   Kind    `json:"kind"`
	// Node is the path of the module that produced the chunk, such as
	// "review/coder#2"; empty for chunks added by hand.
	Node string    `json:"node,omitempty"`
	Time time.Time `json:"time"`
	Tier Tier      `json:"tier"`

	System     *Text        `json:"system,omitempty"`
	User       *Text        `json:"user,omitempty"`
	Assistant  *Turn        `json:"assistant,omitempty"`
	ToolResult *ToolResult  `json:"tool_result,omitempty"`
	ModelCall  *ModelCall   `json:"model_call,omitempty"`
	Memory     *MemoryEvent `json:"memory,omitempty"`
	Placement  *Placement   `json:"placement,omitempty"`
	Compress   *Compression `json:"compress,omitempty"`
	Decision   *Decision    `json:"decision,omitempty"`
	Approval   *Approval    `json:"approval,omitempty"`
	Note       *Text        `json:"note,omitempty"`
	Error      *Failure     `json:"error,omitempty"`
}

// System returns a system chunk: an agent's instructions (durable tier).
func System(text string) Chunk {
	return Chunk{Kind: KindSystem, Tier: TierDurable, System: &Text{Text: text}}
}

// User returns a user chunk (transient tier).
func User(text string) Chunk {
	return Chunk{Kind: KindUser, Tier: TierTransient, User: &Text{Text: text}}
}

// Assistant returns an assistant chunk with optional tool calls (transient).
func Assistant(text string, calls ...ToolCall) Chunk {
	return Chunk{Kind: KindAssistant, Tier: TierTransient, Assistant: &Turn{Text: text, ToolCalls: calls}}
}

// Note returns a note chunk: a durable fact that stays in the model's view
// whatever is compressed.
func Note(text string) Chunk {
	return Chunk{Kind: KindNote, Tier: TierDurable, Note: &Text{Text: text}}
}

// Result returns a tool_result chunk (transient tier).
func Result(r ToolResult) Chunk { return Of(&r) }

// Fail returns an error chunk recording a failure (durable tier).
func Fail(code, message string) Chunk { return Of(&Failure{Code: code, Message: message}) }

// WithNode returns c produced by the module at path node.
func (c Chunk) WithNode(node string) Chunk { c.Node = node; return c }

// WithTier returns c with tier t.
func (c Chunk) WithTier(t Tier) Chunk { c.Tier = t; return c }

// WithTime returns c stamped with time t instead of the time of Append.
func (c Chunk) WithTime(t time.Time) Chunk { c.Time = t; return c }

// Body returns the chunk's body, or nil if it has none.
func (c Chunk) Body() Body {
	switch c.Kind {
	case KindSystem:
		return nilIfNil(c.System)
	case KindUser:
		return nilIfNil(c.User)
	case KindNote:
		return nilIfNil(c.Note)
	case KindAssistant:
		return nilIfNil(c.Assistant)
	case KindToolResult:
		return nilIfNil(c.ToolResult)
	case KindModelCall:
		return nilIfNil(c.ModelCall)
	case KindMemory:
		return nilIfNil(c.Memory)
	case KindPlacement:
		return nilIfNil(c.Placement)
	case KindCompress:
		return nilIfNil(c.Compress)
	case KindDecision:
		return nilIfNil(c.Decision)
	case KindApproval:
		return nilIfNil(c.Approval)
	case KindError:
		return nilIfNil(c.Error)
	}
	return nil
}

// nilIfNil turns a typed nil pointer into a nil interface.
func nilIfNil[T any, P interface {
	*T
	Body
}](p P) Body {
	if p == nil {
		return nil
	}
	return p
}

// bodies counts the body fields that are set.
func (c Chunk) bodies() int {
	n := 0
	for _, set := range [...]bool{
		c.System != nil, c.User != nil, c.Assistant != nil, c.ToolResult != nil,
		c.ModelCall != nil, c.Memory != nil, c.Placement != nil, c.Compress != nil,
		c.Decision != nil, c.Approval != nil, c.Note != nil, c.Error != nil,
	} {
		if set {
			n++
		}
	}
	return n
}

// Validate checks that the chunk is well formed: a known kind, exactly the
// matching body, a resolved tier, and a body that is valid for its kind. It
// does not check ID or Parent; Verify does.
func (c Chunk) Validate() error {
	if !c.Kind.Valid() {
		return fmt.Errorf("%w: chunk kind %d", ErrInvalid, uint8(c.Kind))
	}
	b := c.Body()
	if b == nil {
		return fmt.Errorf("%w: %s chunk has no %s body", ErrInvalid, c.Kind, c.Kind)
	}
	if n := c.bodies(); n != 1 {
		return fmt.Errorf("%w: %s chunk has %d bodies, want exactly 1", ErrInvalid, c.Kind, n)
	}
	if c.Tier != TierTransient && c.Tier != TierDurable {
		return fmt.Errorf("%w: %s chunk has tier %d", ErrInvalid, c.Kind, uint8(c.Tier))
	}
	if err := b.validate(); err != nil {
		return err
	}
	if c.Origin != "" {
		if err := c.Origin.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Text returns the chunk's main text for display: the message text of
// conversation chunks, the summary of a compress chunk, and so on.
func (c Chunk) Text() string {
	switch b := c.Body().(type) {
	case *Text:
		return b.Text
	case *Turn:
		return b.Text
	case *ToolResult:
		return b.ModelContent()
	case *ModelCall:
		return b.Response.Text
	case *Compression:
		return b.Summary
	case *Decision:
		return b.Choice
	case *Approval:
		return b.Verdict
	case *Failure:
		return b.Message
	case *MemoryEvent:
		return string(b.Op)
	case *Placement:
		return b.Backend
	}
	return ""
}
