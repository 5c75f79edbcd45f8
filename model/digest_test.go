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

// goldenRequest has every kind of field the digest frames: a model name,
// messages with and without chunk ids, a strict tool with a schema and
// parameters with pointers and slices.
func goldenRequest() *Request {
	t := 0.5
	return &Request{Model: "m-1", Messages: []session.Message{
		{Role: session.RoleSystem, Content: "be brief", Chunk: "sha256:0101010101010101010101010101010101010101010101010101010101010101"},
		{Role: session.RoleUser, Content: "no chunk: marshalled"},
		{Role: session.RoleTool, Content: "ok", ToolCallID: "c1", Name: "noop", Chunk: "sha256:0202020202020202020202020202020202020202020202020202020202020202"},
	}, Tools: []ToolSpec{{Name: "noop", Description: "Does nothing.", Parameters: []byte(`{"type":"object"}`), Strict: true}},
		Params: Params{Temperature: &t, MaxTokens: 100, Stop: []string{"END"}}}
}

// The digest is recorded in every model_call chunk and compared by replay:
// it must not change, or no record made before would replay. This is the
// digest the first implementation gave this request.
func TestDigestIsStable(t *testing.T) {
	const want = "sha256:2e9063cccd72e192412a2865e88ca870a8c1bdd505efb17b5d7109da13def36e"
	if got := goldenRequest().Digest(); got != want {
		t.Fatalf("digest %s, recorded digests say %s", got, want)
	}
	full := goldenRequest().Messages
	r := goldenRequest()
	r.Messages = full[:2]
	r.Digest()
	next := goldenRequest()
	next.Messages = full // the same array, one more message
	next.Continues(r)
	if got := next.Digest(); got != want {
		t.Fatalf("continued digest %s, want %s", got, want)
	}
}
