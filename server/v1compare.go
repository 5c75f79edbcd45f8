package server

import (
	"net/http"

	"github.com/openrath/rath/session"
)

// v1Compare answers GET /v1/sessions:compare?a=&b=&limit=: the common
// prefix of two sessions (by chunk id) and each one's chunks after it, at
// most limit of each (500 by default, at most 5000; a branch with more says
// it is truncated).
func (s *Server) v1Compare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, ok := v1CheckID(w, r, q.Get("a"), `parameter "a"`)
	if !ok {
		return
	}
	b, ok := v1CheckID(w, r, q.Get("b"), `parameter "b"`)
	if !ok {
		return
	}
	limit, err := intParam(q.Get("limit"), "limit", defaultSuffixLimit, 1, maxSuffixLimit)
	if err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	c, err := s.compare(r.Context(), a, b, limit)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// v1Merge answers POST /v1/sessions:merge {"a", "b"}: b merged into a
// (session.Merge) and committed: 201 with the merge. Sessions placed on
// incompatible sandboxes are a 409.
func (s *Server) v1Merge(w http.ResponseWriter, r *http.Request) {
	req, err := decodeBodyOf[mergeRequest](r.Body)
	if err != nil {
		v1BodyError(w, r, err)
		return
	}
	a, ok := v1CheckID(w, r, string(req.A), `merge field "a"`)
	if !ok {
		return
	}
	b, ok := v1CheckID(w, r, string(req.B), `merge field "b"`)
	if !ok {
		return
	}
	merged, err := s.merge(r.Context(), a, b)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, v1Created{ID: merged.ID(), Head: merged.Head(), Len: merged.Len()})
}

// v1CheckID validates a session id the request names (what says where),
// answering 400 if it is malformed.
func v1CheckID(w http.ResponseWriter, r *http.Request, raw, what string) (session.ID, bool) {
	id := session.ID(raw)
	if err := id.Validate(); err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "The %s %q is not a session id (\"ses_\" and 26 base32 digits).", what, raw)
		return "", false
	}
	return id, true
}
