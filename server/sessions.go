package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Paging limits of the list and chunk endpoints.
const (
	defaultListLimit  = 200
	maxListLimit      = 5000
	defaultChunkLimit = 100
	maxChunkLimit     = 1000
)

// handleList answers GET /api/sessions?status=&op=&q=&limit=: the stored
// sessions, newest first. status may be repeated or comma-separated; q
// keeps the sessions whose id contains it (case-insensitive).
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit", defaultListLimit, 1, maxListLimit)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	statuses, err := statusParam(q["status"])
	if err != nil {
		writeError(w, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	f := store.Filter{Op: q.Get("op"), Status: statuses, Limit: limit}
	needle := strings.ToUpper(strings.TrimSpace(q.Get("q")))
	if needle != "" {
		f.Limit = 0 // filter first, then cap
	}
	infos, err := s.st.List(r.Context(), f)
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]store.Info, 0, len(infos))
	for _, in := range infos {
		if needle == "" || strings.Contains(strings.ToUpper(string(in.ID)), needle) {
			out = append(out, in)
		}
		if len(out) == limit {
			break
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// sessionView is the body of GET /api/sessions/{id}.
type sessionView struct {
	Info      store.Info         `json:"info"`
	Usage     session.Usage      `json:"usage"`
	Placement *session.Placement `json:"placement"`
	// Children are the sessions made from this one (forks, merges,
	// derivations), for the viewer's comparison picker.
	Children []session.ID `json:"children"`
}

// handleSession answers GET /api/sessions/{id}.
func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	v, err := s.loadView(r.Context(), id)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// loadView reads what GET /api/sessions/{id} and GET /v1/sessions/{id}
// answer.
func (s *Server) loadView(ctx context.Context, id session.ID) (sessionView, error) {
	ses, err := s.st.Load(ctx, id)
	if err != nil {
		return sessionView{}, err
	}
	info, err := s.st.Info(ctx, id)
	if err != nil {
		return sessionView{}, err
	}
	// The session may have grown between the two reads: report the
	// metadata of the chain that was loaded.
	info.Len, info.Head = ses.Len(), ses.Head()
	children, err := s.st.Children(ctx, id)
	if err != nil {
		return sessionView{}, err
	}
	v := sessionView{Info: info, Usage: ses.Usage(), Children: children}
	if v.Children == nil {
		v.Children = []session.ID{}
	}
	if p := ses.Placement(); !p.IsZero() {
		v.Placement = &p
	}
	return v, nil
}

// chunkPage is the body of GET /api/sessions/{id}/chunks.
type chunkPage struct {
	// From is the index of the first chunk of the page.
	From   int             `json:"from"`
	Chunks []session.Chunk `json:"chunks"`
	// Next is the index to ask for next, or null at the end.
	Next *int `json:"next"`
	// Len is the session's length when the page was read.
	Len int `json:"len"`
}

// handleChunks answers GET /api/sessions/{id}/chunks?from=N&limit=M: the
// chunks [N, N+M) and where the next page starts.
func (s *Server) handleChunks(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	from, err := intParam(q.Get("from"), "from", 0, 0, -1)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	limit, err := intParam(q.Get("limit"), "limit", defaultChunkLimit, 1, maxChunkLimit)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	info, err := s.st.Info(r.Context(), id)
	if err != nil {
		fail(w, r, err)
		return
	}
	if from > info.Len {
		writeError(w, http.StatusBadRequest, "from=%d is past the end of session %s (%d chunks).", from, id, info.Len)
		return
	}
	to := min(from+limit, info.Len)
	cs, err := s.st.Range(r.Context(), id, from, to)
	if err != nil {
		fail(w, r, err)
		return
	}
	page := chunkPage{From: from, Chunks: cs, Len: info.Len}
	if page.Chunks == nil {
		page.Chunks = []session.Chunk{}
	}
	if to < info.Len {
		page.Next = &to
	}
	writeJSON(w, http.StatusOK, page)
}

// intParam parses an integer query parameter: def when empty, an error
// naming the parameter when it is not an integer in [lo, hi] (hi < 0: no
// upper bound).
func intParam(raw, name string, def, lo, hi int) (int, error) {
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	switch {
	case err != nil:
		return 0, fmt.Errorf("the parameter %s=%q is not an integer", name, raw)
	case n < lo:
		return 0, fmt.Errorf("the parameter %s=%d is below %d", name, n, lo)
	case hi >= 0 && n > hi:
		return 0, fmt.Errorf("the parameter %s=%d is above %d", name, n, hi)
	}
	return n, nil
}
