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

// request returns the model request for s.
func (c *conversation) request(s *session.Session, instructions string, tools []model.ToolSpec, p model.Params) *model.Request {
	if !c.extend(s, instructions) {
		c.project(s, instructions)
	}
	c.n, c.head = s.Len(), s.Head()
	req := &model.Request{Messages: c.msgs[:len(c.msgs):len(c.msgs)], Tools: tools, Params: p}
	req.Continues(c.prev) // Digest checks that the messages do extend prev's
	c.prev = req
	return req
}

// extend appends the messages of the chunks s has beyond those projected,
// and reports false if s must be projected whole instead.
func (c *conversation) extend(s *session.Session, instructions string) bool {
	if c.msgs == nil || s.Len() < c.n || c.n == 0 || s.Chunk(c.n-1).ID != c.head {
		return false
	}
	from := len(c.msgs)
	for _, ch := range s.From(c.n) {
		if ch.Compress != nil {
			c.msgs = c.msgs[:from]
			return false
		}
		m, ok := ch.Message()
		if !ok {
			continue
		}
		if !c.moved && len(c.msgs) > 0 && isInstructions(m, instructions) {
			// A full projection would move this one to the front.
			c.msgs = c.msgs[:from]
			return false
		}
		c.msgs = append(c.msgs, m)
	}
	return true
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

func isInstructions(m session.Message, instructions string) bool {
	return m.Role == session.RoleSystem && m.Content == instructions
}
