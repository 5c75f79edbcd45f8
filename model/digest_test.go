package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/openrath/rath/session"
)

// fresh returns a copy of r that continues nothing: its digest is computed
// from the start.
func fresh(r *Request) *Request {
	c := *r
	c.prefix = nil
	c.Messages = append([]session.Message(nil), r.Messages...)
	return &c
}

func TestContinuedDigestEqualsFullDigest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tools := []ToolSpec{{Name: "noop", Parameters: []byte(`{"type":"object"}`)}}
	for round := range 50 {
		var msgs []session.Message
		var prev *Request
		for step := range 30 {
			for range rng.IntN(3) + 1 {
				m := session.Message{Role: session.RoleTool, Content: fmt.Sprint("r", round, step)}
				if rng.IntN(5) > 0 {
					m.Chunk = session.ChunkID(fmt.Sprintf("sha256:%064x", rng.Uint64()))
				}
				msgs = append(msgs, m)
			}
			req := &Request{Messages: msgs[:len(msgs):len(msgs)], Tools: tools, Params: Params{MaxTokens: step / 5}}
			if step%4 == 0 {
				req.Tools = append([]ToolSpec(nil), tools...) // equal, another slice
				req.Tools[0].Name = fmt.Sprint("tool_", step)
			}
			req.Continues(prev)
			if got, want := req.Digest(), fresh(req).Digest(); got != want {
				t.Fatalf("round %d step %d: continued digest %s, full %s", round, step, got, want)
			}
			prev = req
		}
	}
}

func TestContinuesChecksTheMessagesExtend(t *testing.T) {
	id := func(i int) session.ChunkID { return session.ChunkID(fmt.Sprintf("sha256:%064x", i)) }
	msgs := make([]session.Message, 0, 8)
	for i := range 3 {
		msgs = append(msgs, session.Message{Role: session.RoleUser, Chunk: id(i)})
	}
	prev := &Request{Messages: msgs}
	prev.Digest()

	// Another array with the same first messages and a different middle.
	other := append([]session.Message(nil), msgs...)
	other[1].Chunk = id(99)
	other = append(other, session.Message{Role: session.RoleUser, Chunk: id(3)})
	r := &Request{Messages: other}
	r.Continues(prev)
	if r.Digest() != fresh(r).Digest() {
		t.Fatal("a request that does not extend its predecessor reused its hash state")
	}

	// The same array, its last hashed message replaced in place.
	msgs[2].Chunk = id(42)
	msgs = append(msgs, session.Message{Role: session.RoleUser, Chunk: id(4)})
	r = &Request{Messages: msgs}
	r.Continues(prev)
	if r.Digest() != fresh(r).Digest() {
		t.Fatal("a replaced last message was not hashed again")
	}

	// Another model name.
	r = &Request{Model: "other", Messages: msgs}
	r.Continues(prev)
	if r.Digest() != fresh(r).Digest() {
		t.Fatal("the model name of the predecessor was kept")
	}
}
