package agent

import (
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// conversation keeps a run's request messages as its session grows: each
// step projects only the chunks appended since the last request and
// appends their messages in place, and the request Continues the last one,
// so neither the transcript nor the request digest is rebuilt from the
// start. The messages are the session's transcript with the agent's
// instructions moved to the front, exactly as a full projection gives them;
// anything else (a compress chunk, a session that does not extend the last
// one) projects the whole session again.
type conversation struct {
	msgs  []session.Message // appended in place; requests get them clipped
	n     int               // chunks of the session projected
	head  session.ChunkID   // the session's head then
	moved bool              // the instructions were moved to the front
	prev  *model.Request
	room  int // messages the run may add: room left in the array a projection makes
}

// request returns the model request for s. Its evidence (Request.Parts)
// lists only what it adds to the last request when that request's record
// is in s, or to the request of s's last record when a whole projection
// begins with that request's messages (see follow); otherwise every
// message.
func (c *conversation) request(s *session.Session, instructions string, tools []model.ToolSpec, p model.Params) *model.Request {
	extended, recorded := c.extend(s, instructions)
	base, shared := recorded, 0
	if extended && recorded != "" {
		shared = len(c.prev.Messages)
	}
	if !extended {
		c.project(s, instructions)
		base, shared = follow(s, c.msgs)
	}
	c.n, c.head = s.Len(), s.Head()
	req := &model.Request{Messages: c.msgs[:len(c.msgs):len(c.msgs)], Tools: tools, Params: p}
	req.Continues(c.prev) // Digest checks that the messages do extend prev's
	// Said outright rather than left to Continues, which needs the same
	// array: the messages may have moved as they grew.
	req.Follows(base, shared)
	c.prev = req
	return req
}

// extend appends the messages of the chunks s has beyond those projected,
// and reports false if s must be projected whole instead. recorded is the
// last request's digest if its record is among those chunks (as it is when
// the run recorded the call), and "" otherwise.
func (c *conversation) extend(s *session.Session, instructions string) (ok bool, recorded string) {
	if c.msgs == nil || s.Len() < c.n || c.n == 0 || s.Chunk(c.n-1).ID != c.head {
		return false, ""
	}
	want := ""
	if c.prev != nil {
		want = c.prev.Recorded()
	}
	from := len(c.msgs)
	for _, ch := range s.From(c.n) {
		if ch.Compress != nil {
			c.msgs = c.msgs[:from]
			return false, ""
		}
		if ch.ModelCall != nil && want != "" && ch.ModelCall.RequestDigest == want {
			recorded = want
		}
		m, ok := ch.Message()
		if !ok {
			continue
		}
		if !c.moved && len(c.msgs) > 0 && isInstructions(m, instructions) {
			// A full projection would move this one to the front.
			c.msgs = c.msgs[:from]
			return false, ""
		}
		c.msgs = append(c.msgs, m)
	}
	return true, recorded
}

// project projects s whole, moving the first system message holding the
// instructions (after the first message) to the front.
func (c *conversation) project(s *session.Session, instructions string) {
	// Room for the steps to come, so that a run does not grow the array
	// step by step.
	msgs := s.AppendTranscript(make([]session.Message, 0, s.Len()+max(c.room, 8)))
	c.moved = false
	for i, m := range msgs {
		if i > 0 && isInstructions(m, instructions) {
			copy(msgs[1:i+1], msgs[0:i])
			msgs[0] = m
			c.moved = true
			break
		}
	}
	c.msgs = msgs
}

// follow finds the request the session's last model_call chunk records
// (an earlier run's last step, for a run on a session that goes on) and,
// if msgs begin with its messages — the same chunks, in the same roles,
// with the same labels — returns its digest and how many messages it had:
// the first request of this run then records the evidence of only the
// messages it adds. It costs what the projection does, once a run.
func follow(s *session.Session, msgs []session.Message) (string, int) {
	for i := s.Len() - 1; i >= 0; i-- {
		c := s.Chunk(i)
		if c.ModelCall == nil {
			continue
		}
		mc := c.ModelCall
		if mc.Parts == nil || mc.RequestDigest == "" || mc.Parts.Len() == 0 || mc.Parts.Len() > len(msgs) {
			return "", 0
		}
		parts, err := s.RequestParts(i)
		if err != nil || len(parts) != mc.Parts.Len() {
			return "", 0
		}
		for k := range parts {
			if parts[k].Chunk == "" || parts[k] != msgs[k].Part() {
				return "", 0
			}
		}
		return mc.RequestDigest, len(parts)
	}
	return "", 0
}

func isInstructions(m session.Message, instructions string) bool {
	return m.Role == session.RoleSystem && m.Content == instructions
}
