package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/openrath/rath/session"
)

// maxBody bounds a request body.
const maxBody = 1 << 20

// newSession is the body of a fork or merge response.
type newSession struct {
	ID session.ID `json:"id"`
}

// forkRequest is the body of POST /api/sessions/{id}/fork.
type forkRequest struct {
	// At keeps only the first At chunks; nil keeps them all.
	At *int `json:"at"`
}

// handleFork answers POST /api/sessions/{id}/fork {"at": N}: it forks the
// stored session (all of it, or its first N chunks), commits the fork and
// answers 201 {"id": fork}.
func (s *Server) handleFork(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	var req forkRequest
	if !decodeBody(w, r, &req, true) {
		return
	}
	src, err := s.st.Load(r.Context(), id)
	if err != nil {
		fail(w, r, err)
		return
	}
	fork := src.Fork()
	if req.At != nil {
		if fork, err = src.ForkAt(*req.At); err != nil {
			fail(w, r, err)
			return
		}
	}
	if err := s.st.Commit(r.Context(), fork, ""); err != nil {
		fail(w, r, fmt.Errorf("commit fork of %s: %w", id, err))
		return
	}
	writeJSON(w, http.StatusCreated, newSession{ID: fork.ID()})
}

// mergeRequest is the body of POST /api/merge.
type mergeRequest struct {
	A session.ID `json:"a"`
	B session.ID `json:"b"`
}

// handleMerge answers POST /api/merge {"a": id, "b": id}: it merges b into
// a (session.Merge), commits the result and answers 201 {"id": merged}.
// Sessions placed on incompatible sandboxes answer 409.
func (s *Server) handleMerge(w http.ResponseWriter, r *http.Request) {
	var req mergeRequest
	if !decodeBody(w, r, &req, false) {
		return
	}
	if _, ok := checkID(w, string(req.A), `merge field "a"`); !ok {
		return
	}
	if _, ok := checkID(w, string(req.B), `merge field "b"`); !ok {
		return
	}
	a, err := s.st.Load(r.Context(), req.A)
	if err != nil {
		fail(w, r, err)
		return
	}
	b, err := s.st.Load(r.Context(), req.B)
	if err != nil {
		fail(w, r, err)
		return
	}
	merged, err := a.Merge(b)
	if err != nil {
		fail(w, r, err)
		return
	}
	if err := s.st.Commit(r.Context(), merged, ""); err != nil {
		fail(w, r, fmt.Errorf("commit merge of %s and %s: %w", req.A, req.B, err))
		return
	}
	writeJSON(w, http.StatusCreated, newSession{ID: merged.ID()})
}

// decodeBody decodes the JSON request body into v, answering 400 (or 413)
// and returning false if it is malformed. An empty body is allowed when
// optional is set, and leaves v as it was.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, optional bool) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.Is(err, io.EOF) && optional:
		return true
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "The request needs a JSON body.")
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "The request body is larger than %d bytes.", maxBody)
	default:
		writeError(w, http.StatusBadRequest, "The request body is not valid JSON for this endpoint: %v.", err)
	}
	return false
}
