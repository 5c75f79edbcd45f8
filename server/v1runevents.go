package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// v1RunEvents answers GET /v1/runs/{id}/events with Server-Sent Events:
// the run's state, then every chunk of its sessions (its input, its ledger
// and each session it writes: agents, branches, its output) from the start
// or after where a reconnecting client's Last-Event-ID says it was, then
// each change as it happens, pushed from the store's notifications:
//
//	event: run          data: the run (as GET /v1/runs/{id})     when its state changes
//	event: step         data: {"session", "index", "kind", "chunk"}  a model call committed
//	event: tool_call    data: ...                               an assistant turn that calls tools
//	event: tool_result, approval, placement, decision, note, memory, compress,
//	       user, system, assistant: the chunk of that kind; step_failed: an error chunk
//	event: delta        data: {"agent", "step", "text"}   streamed model text, as it comes (no id)
//	event: live         data: {"state"}       once the history is sent
//	event: end          data: {"state"} or {"reason"}  when the run is over and sent, or the server stops
//	event: error        data: {"error": {...}}            when the store fails
//
// Every run and chunk event carries an id: a cursor of what the client has
// (chunks sent per session, and the state), so a reconnect with
// Last-Event-ID goes on with nothing lost or repeated. A session made from
// another of the run's (an agent's fork of the input) is sent from where it
// departs from it: the chunks they share are sent once.
func (s *Server) v1RunEvents(w http.ResponseWriter, r *http.Request) {
	if !s.needRuns(w, r) {
		return
	}
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	cur, err := decodeRunCursor(r.Header.Get("Last-Event-ID"))
	if err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	release, ok := s.subscribe(w, r)
	if !ok {
		return
	}
	defer release()
	ctx := r.Context()
	events, err := s.st.Watch(ctx) // before reading anything: no change after it is missed
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	view, err := s.runs.Run(ctx, scopeIn(ctx), id)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	deltas, err := s.runs.Deltas(ctx, scopeIn(ctx), id)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	rs := &runStream{s: s, run: id, out: &tailStream{w: w, rc: http.NewResponseController(w)}, cur: cur, ignored: map[session.ID]bool{}}
	startEvents(w)
	errBody := func(err error) any {
		return v1Error{Error: v1ErrorBody{Code: CodeUnavailable, Message: sentence(err.Error()), RequestID: requestID(r)}}
	}
	if err := rs.refresh(ctx, view); err != nil {
		if ctx.Err() == nil {
			_ = rs.out.event("error", "", errBody(err))
		}
		return
	}
	if final(rs.cur.State) {
		_ = rs.out.event("end", "", map[string]string{"state": rs.cur.State})
		return
	}
	if rs.out.event("live", "", map[string]string{"state": rs.cur.State}) != nil {
		return
	}
	rs.follow(ctx, events, deltas, errBody)
}

// runCursor is what a run stream's client has: the chunks sent of each
// session, and the last state sent. It is the id of every event.
type runCursor struct {
	Sent  map[session.ID]int `json:"c"`
	State string             `json:"st,omitempty"`
}

func (c runCursor) id() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeRunCursor reads a run stream's Last-Event-ID ("" is a fresh
// start).
func decodeRunCursor(raw string) (runCursor, error) {
	c := runCursor{Sent: map[session.ID]int{}}
	if raw == "" {
		return c, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err == nil {
		for id, n := range c.Sent {
			if id.Validate() != nil || n < 0 {
				err = errors.New("bad entry")
				break
			}
		}
	}
	if err != nil {
		return runCursor{}, fmt.Errorf("the Last-Event-ID %.40q is not an event id of a run stream", raw)
	}
	if c.Sent == nil {
		c.Sent = map[session.ID]int{}
	}
	return c, nil
}

// runStream is one client's stream of a run's events.
type runStream struct {
	s   *Server
	run session.ID
	out *tailStream // its writing half
	cur runCursor
	// order is the run's sessions in the order they were found; ignored
	// are sessions of other runs seen in the store's notifications.
	order   []session.ID
	ignored map[session.ID]bool
}

// follow sends what changes until the client goes, the run ends, the
// store stops delivering notifications or the server shuts down. It reads
// nothing unless told: the store notifies every commit, and the label
// writes a run's stream needs (its record's, its sessions' attribution to
// it) on either store and from any process.
func (rs *runStream) follow(ctx context.Context, events <-chan store.Event, deltas <-chan RunDelta, errBody func(error) any) {
	hb := time.NewTicker(rs.s.heartbeat)
	defer hb.Stop()
	stop := stopping(ctx)
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-stop:
			_ = rs.out.event("end", "", map[string]string{"reason": "the server is shutting down"})
			return
		case <-hb.C:
			err = rs.out.write(": keep-alive\n\n")
		case d := <-deltas:
			// No id: a reconnect goes on from the last stored event; the
			// step's model call holds the whole text.
			err = rs.out.event("delta", "", d)
		case ev, ok := <-events:
			if !ok {
				_ = rs.out.event("end", "", map[string]string{"reason": "the store stopped delivering notifications"})
				return
			}
			err = rs.handle(ctx, ev)
		}
		if err != nil {
			if ctx.Err() == nil {
				_ = rs.out.event("error", "", errBody(err))
			}
			return
		}
		if final(rs.cur.State) {
			rs.lastDeltas(deltas)
			_ = rs.out.event("end", "", map[string]string{"state": rs.cur.State})
			return
		}
	}
}

// deltaGrace is how long a stream whose run ended waits for the last of
// its streamed text: published before the run's end, it travels another
// way (another connection on PostgreSQL) and may come a moment after.
const deltaGrace = 150 * time.Millisecond

// lastDeltas sends the deltas that come until deltaGrace passes without
// one.
func (rs *runStream) lastDeltas(deltas <-chan RunDelta) {
	if deltas == nil {
		return
	}
	t := time.NewTimer(deltaGrace)
	defer t.Stop()
	for {
		select {
		case d := <-deltas:
			if rs.out.event("delta", "", d) != nil {
				return
			}
			t.Reset(deltaGrace)
		case <-t.C:
			return
		}
	}
}

// handle reacts to one notification of the store.
func (rs *runStream) handle(ctx context.Context, ev store.Event) error {
	switch {
	case ev.Missed:
		return rs.refresh(ctx, RunView{})
	case ev.ID == rs.run && ev.Labels:
		// The run's record: its state may have changed.
		return rs.refresh(ctx, RunView{})
	case slices.Contains(rs.order, ev.ID):
		if ev.Labels {
			return nil
		}
		return rs.catchUp(ctx, ev.ID, ev.Len)
	case rs.ignored[ev.ID] && !ev.Labels:
		// Another run's; but an agent's session is labelled with its
		// run after its first commit, so a label write is looked at.
		return nil
	}
	info, err := rs.s.st.Info(ctx, ev.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if rs.s.runs.RunOwner(info) != rs.run {
		rs.ignored[ev.ID] = true
		return nil
	}
	return rs.catchUp(ctx, ev.ID, info.Len)
}

// refresh reads the run again (unless given it): a run event if its state
// changed, and every chunk of its sessions not sent yet (once more after
// it ends, so that nothing it wrote last is left out).
func (rs *runStream) refresh(ctx context.Context, view RunView) error {
	if view.ID == "" {
		var err error
		if view, err = rs.s.runs.Run(ctx, scopeIn(ctx), rs.run); err != nil {
			return err
		}
	}
	// A state change goes first, but the end of the run after what the
	// run wrote last.
	if view.State != rs.cur.State && !final(view.State) {
		if err := rs.sendRun(view); err != nil {
			return err
		}
	}
	ids, err := rs.s.runs.RunSessions(ctx, scopeIn(ctx), rs.run)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := rs.catchUp(ctx, id, -1); err != nil {
			return err
		}
	}
	if view.State != rs.cur.State {
		return rs.sendRun(view)
	}
	return nil
}

// sendRun sends the run, in its new state.
func (rs *runStream) sendRun(view RunView) error {
	rs.cur.State = view.State
	return rs.out.event("run", rs.cur.id(), view)
}

// catchUp sends the chunks of session id not sent yet, up to its length
// (upto; -1 reads it), finding the session first if it is new to the
// stream.
func (rs *runStream) catchUp(ctx context.Context, id session.ID, upto int) error {
	if !slices.Contains(rs.order, id) {
		if err := rs.found(ctx, id); err != nil {
			return err
		}
	}
	if upto < 0 {
		info, err := rs.s.st.Info(ctx, id)
		if err != nil {
			return err
		}
		upto = info.Len
	}
	for rs.cur.Sent[id] < upto {
		from := rs.cur.Sent[id]
		to := min(from+tailPage, upto)
		cs, err := rs.s.chunks.Encoded(ctx, id, from, to)
		if err != nil {
			return fmt.Errorf("read chunks [%d,%d) of %s: %w", from, to, id, err)
		}
		for i, c := range cs {
			rs.cur.Sent[id] = from + i + 1
			data := fmt.Appendf(nil, `{"session":%q,"index":%d,"kind":%q,"chunk":%s}`, id, from+i, c.kind.String(), c.json)
			msg := "event: " + runEventName(c) + "\nid: " + rs.cur.id() + "\ndata: " + string(data) + "\n\n"
			if _, err := rs.out.w.Write([]byte(msg)); err != nil {
				return err
			}
		}
		if err := rs.out.rc.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// found adds session id to the stream. A session made from another of the
// run's is sent from where it departs from it, if the client has nothing of
// it yet: the chunks the two share were sent with the other.
func (rs *runStream) found(ctx context.Context, id session.ID) error {
	rs.order = append(rs.order, id)
	delete(rs.ignored, id)
	if _, ok := rs.cur.Sent[id]; ok {
		return nil
	}
	rs.cur.Sent[id] = 0
	info, err := rs.s.st.Info(ctx, id)
	if err != nil {
		return err
	}
	for _, p := range info.Lineage.Parents {
		if _, ours := rs.cur.Sent[p]; !ours || p == id {
			continue
		}
		n, err := sharedPrefix(ctx, rs.s.st, id, p, rs.cur.Sent[p])
		if err != nil {
			return err
		}
		rs.cur.Sent[id] = n
		break
	}
	return nil
}

// sharedPrefix counts the leading chunks a and b share, among the first
// upto of b's.
func sharedPrefix(ctx context.Context, st store.Store, a, b session.ID, upto int) (int, error) {
	if upto == 0 {
		return 0, nil
	}
	ia, err := st.Info(ctx, a)
	if err != nil {
		return 0, err
	}
	upto = min(upto, ia.Len)
	ca, err := st.Range(ctx, a, 0, upto)
	if err != nil {
		return 0, err
	}
	cb, err := st.Range(ctx, b, 0, upto)
	if err != nil {
		return 0, err
	}
	n := 0
	for n < len(ca) && n < len(cb) && ca[n].ID == cb[n].ID {
		n++
	}
	return n, nil
}

// runEventName names a chunk's event in a run stream: its kind, but a
// model call is a step, an error a failed step, and an assistant turn that
// calls tools a tool call.
func runEventName(c encodedChunk) string {
	switch c.kind {
	case session.KindModelCall:
		return "step"
	case session.KindError:
		return "step_failed"
	case session.KindAssistant:
		if c.calls {
			return "tool_call"
		}
	}
	return c.kind.String()
}
