package server

import (
	"net/http"
	"strconv"

	"github.com/openrath/rath/store"
)

// v1SessionEvents answers GET /v1/sessions/{id}/events with Server-Sent
// Events: every chunk of the session from the start (or after the index a
// reconnecting client's Last-Event-ID names), then each chunk as it is
// committed, pushed from the store's commit notifications:
//
//	event: chunk  id: <index>  data: {"index": N, "kind": "...", "chunk": {...}}
//	event: live   data: {"len": N}     once the history is sent
//	event: end    data: {"reason": ...} when the session is finished (closed,
//	                                     archived or failed) and sent, or the server stops
//	event: error  data: {"error": {...}} when the store fails
//
// and a comment every heartbeat while idle. A subscriber that reads slowly
// holds only its own connection: commits never wait for it. Past
// Options.MaxSubscribers open streams, 429 exhausted.
func (s *Server) v1SessionEvents(w http.ResponseWriter, r *http.Request) {
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	release, ok := s.subscribe(w, r)
	if !ok {
		return
	}
	defer release()
	ctx := r.Context()
	events, err := s.st.Watch(ctx) // before reading the length: no commit after it is missed
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	info, err := s.storeOf(ctx).Info(ctx, id) // another scope's is not found
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	t := &tailStream{st: s.st, chunks: s.chunks, id: id, w: w, rc: http.NewResponseController(w)}
	if n, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil && n >= 0 {
		t.sent = min(n+1, info.Len)
	}
	startEvents(w)
	if t.catchUp(ctx, info.Len) != nil {
		return
	}
	if finished(info.Status) {
		_ = t.event("end", "", map[string]any{"reason": "the session is " + string(info.Status), "len": info.Len})
		return
	}
	if t.event("live", "", map[string]int{"len": info.Len}) != nil {
		return
	}
	t.follow(ctx, events, s.heartbeat, ": keep-alive\n\n", func(err error) any {
		return v1Error{Error: v1ErrorBody{Code: CodeUnavailable, Message: sentence(err.Error()), RequestID: requestID(r)}}
	})
}

// finished reports whether a session of this status takes no more commits.
func finished(st store.Status) bool {
	return st == store.StatusClosed || st == store.StatusArchived || st == store.StatusFailed
}
