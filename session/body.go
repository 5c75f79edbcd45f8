package session

import (
	"encoding/json"
	"fmt"
)

// Body is the typed payload of a chunk. Each kind has one body type; the
// set is closed (the interface has an unexported method).
//
// Bodies are shared by every session that contains their chunk: treat a body
// reached through a Chunk as read-only. Verify detects a body changed in place.
type Body interface {
	// Kind is the chunk kind this body belongs to.
	Kind() Kind
	validate() error
}

// Text is the body of system, user and note chunks.
type Text struct {
	Text string `json:"text"`
}

func (*Text) Kind() Kind        { return KindInvalid } // shared by three kinds; see Of
func (t *Text) validate() error { return nil }

// Of returns a chunk of the body's kind carrying body, with the kind's default
// tier. Text bodies are ambiguous; use System, User or Note for them.
func Of(b Body) Chunk {
	var c Chunk
	switch b := b.(type) {
	case *Turn:
		c.Assistant = b
	case *ToolResult:
		c.ToolResult = b
	case *ModelCall:
		c.ModelCall = b
	case *MemoryEvent:
		c.Memory = b
	case *Placement:
		c.Placement = b
	case *Compression:
		c.Compress = b
	case *Decision:
		c.Decision = b
	case *Approval:
		c.Approval = b
	case *Failure:
		c.Error = b
	default:
		// A *Text or nil: the chunk stays invalid and Validate says why.
		return c
	}
	c.Kind = b.Kind()
	c.Tier = c.Kind.DefaultTier()
	return c
}

// validRaw checks an embedded JSON value: empty is allowed (absent), anything
// else must be valid JSON, because it is part of the hashed encoding.
func validRaw(field string, r json.RawMessage) error {
	if len(r) == 0 || json.Valid(r) {
		return nil
	}
	return fmt.Errorf("%w: %s is not valid JSON", ErrInvalid, field)
}
