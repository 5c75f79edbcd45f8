package agent

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// wholeRequest is the request messages as projected from the whole
// session: the transcript with the first instructions message after the
// first moved to the front.
func wholeRequest(s *session.Session, instructions string) []session.Message {
	msgs := s.Transcript()
	for i, m := range msgs {
		if i > 0 && m.Role == session.RoleSystem && m.Content == instructions {
			copy(msgs[1:i+1], msgs[0:i])
			msgs[0] = m
			break
		}
	}
	return msgs
}

// randomChunk is a chunk of any kind a run's session holds, the agent's
// instructions among them, and now and then a compression of s's last few
// chunks.
func randomChunk(rng *rand.Rand, s *session.Session, instructions string, i int) session.Chunk {
	switch rng.IntN(9) {
	case 0:
		return session.System(instructions)
	case 1:
		return session.User(fmt.Sprint("user ", i))
	case 2:
		return session.Note(fmt.Sprint("note ", i))
	case 3:
		return session.Assistant(fmt.Sprint("answer ", i))
	case 4:
		return session.Assistant("", session.NewToolCall(fmt.Sprint("c", i), "noop", `{}`))
	case 5:
		return session.Of(&session.ModelCall{Provider: "scripted", Model: "m"})
	case 6:
		return session.Of(&session.MemoryEvent{Op: session.MemoryRecall, Query: "q",
			Hits: []session.MemoryHit{{URI: "rath://memory/user/x", Text: fmt.Sprint("fact ", i)}}})
	case 7:
		if s.Len() > 4 && rng.IntN(3) == 0 {
			from, to := s.Chunk(s.Len()-4), s.Chunk(s.Len()-2)
			return session.Of(&session.Compression{From: from.ID, To: to.ID, Count: 3, Summary: fmt.Sprint("summary ", i)})
		}
		return session.Note(fmt.Sprint("note ", i))
	default:
		return session.System(fmt.Sprint("system ", i))
	}
}

func TestConversationMatchesWholeProjection(t *testing.T) {
	const instructions = "Be brief."
	rng := rand.New(rand.NewPCG(7, 11))
	continued := 0
	for round := range 200 {
		var c conversation
		s := session.FromUser("go")
		if rng.IntN(2) == 0 {
			s = session.FromSystem(instructions)
		}
		for step := range 25 {
			added := rng.IntN(4) + 1
			for range added {
				s = s.Append(randomChunk(rng, s, instructions, step))
			}
			if step > 0 && rng.IntN(8) == 0 {
				// A session that does not extend the last request's: some of
				// what that request saw is gone.
				s, _ = s.Rewind(max(s.Len()-added-1-rng.IntN(3), 1))
				s = s.Append(session.User(fmt.Sprint("instead ", step)))
			}
			req := c.request(s, instructions, nil, model.Params{})
			want := wholeRequest(s, instructions)
			if !slices.EqualFunc(req.Messages, want, sameMessage) {
				t.Fatalf("round %d step %d: the request's messages differ from the whole projection\n got %v\nwant %v",
					round, step, req.Messages, want)
			}
			full := &model.Request{Messages: want}
			if req.Digest() != full.Digest() {
				t.Fatalf("round %d step %d: digest differs from the whole request's", round, step)
			}
			// Recorded as a run records it, the request's evidence lists
			// every message, whatever it continues.
			mc := (&model.Response{Provider: "scripted"}).Record(req, "m", true)
			s = s.Append(session.Of(&mc))
			parts, err := s.RequestParts(s.Len() - 1)
			if err != nil {
				t.Fatalf("round %d step %d: %v", round, step, err)
			}
			for i := range want {
				if i >= len(parts) || parts[i] != want[i].Part() {
					t.Fatalf("round %d step %d: evidence %+v, want the parts of %+v", round, step, parts, want)
				}
			}
			if len(parts) != len(want) {
				t.Fatalf("round %d step %d: %d parts for %d messages", round, step, len(parts), len(want))
			}
			if mc.Parts.Base != "" {
				continued++
			}
		}
	}
	// Most steps extend the last request; a few follow a record of a
	// projection made again.
	if continued < 200*25/2 {
		t.Fatalf("only %d of %d records continue an earlier one", continued, 200*25)
	}
}

func sameMessage(a, b session.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.Chunk == b.Chunk && a.Trust == b.Trust && a.Source == b.Source &&
		a.ToolCallID == b.ToolCallID && len(a.ToolCalls) == len(b.ToolCalls)
}

// An earlier request keeps its messages while later ones are appended in
// place behind them.
func TestConversationKeepsEarlierRequests(t *testing.T) {
	var c conversation
	s := session.FromUser("go").Append(session.System("x"))
	first := c.request(s, "x", nil, model.Params{})
	snapshot := slices.Clone(first.Messages)
	for i := range 50 {
		s = s.Append(session.User(fmt.Sprint("more ", i)))
		c.request(s, "x", nil, model.Params{})
	}
	if !slices.EqualFunc(first.Messages, snapshot, sameMessage) {
		t.Fatal("a later request changed an earlier one's messages")
	}
	if cap(first.Messages) != len(first.Messages) {
		t.Fatal("a request's messages can be appended to in place")
	}
}
