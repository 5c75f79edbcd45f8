package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/openrath/rath/export"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Page sizes of /v1 lists: limit defaults to defaultPage, at most maxPage.
const (
	defaultPage = 100
	maxPage     = 200
)

// v1SessionView is the body of GET /v1/sessions/{id}: the stored
// session's metadata (id, lineage, status, head, len, labels, times), its
// usage and placement, and the sessions made from it.
type v1SessionView struct {
	store.Info
	Usage     session.Usage      `json:"usage"`
	Placement *session.Placement `json:"placement"`
	Children  []session.ID       `json:"children"`
}

func (s *Server) v1Session(w http.ResponseWriter, r *http.Request) {
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	v, err := s.loadView(r.Context(), id)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v1SessionView{Info: v.Info, Usage: v.Usage, Placement: v.Placement, Children: v.Children})
}

// v1ChunkPage is the body of GET /v1/sessions/{id}/chunks.
type v1ChunkPage struct {
	Items []session.Chunk `json:"items"`
	// NextCursor asks for the next page; absent on the last one.
	NextCursor string `json:"next_cursor,omitempty"`
	// Len is the session's length when the page was read.
	Len int `json:"len"`
}

// v1Chunks answers GET /v1/sessions/{id}/chunks?cursor=&limit=: the chunks
// in chain order, a page at a time.
func (s *Server) v1Chunks(w http.ResponseWriter, r *http.Request) {
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit", defaultPage, 1, maxPage)
	if err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	from, err := decodeCursor(q.Get("cursor"), "chunks")
	if err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	info, err := s.storeOf(r.Context()).Info(r.Context(), id)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	if from > info.Len {
		v1Errorf(w, r, http.StatusBadRequest, "The cursor points past the end of session %s (%d chunks).", id, info.Len)
		return
	}
	to := min(from+limit, info.Len)
	cs, err := s.storeOf(r.Context()).Range(r.Context(), id, from, to)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	page := v1ChunkPage{Items: cs, Len: info.Len}
	if page.Items == nil {
		page.Items = []session.Chunk{}
	}
	if to < info.Len {
		page.NextCursor = encodeCursor("chunks", to)
	}
	writeJSON(w, http.StatusOK, page)
}

// A cursor is opaque to clients: the list it belongs to and a position,
// base64url-encoded. A cursor of one list is refused by another.
func encodeCursor(list string, at int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(list + ":" + strconv.Itoa(at)))
}

// decodeCursor returns the position a cursor of list holds (0 for none).
func decodeCursor(raw, list string) (int, error) {
	if raw == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return 0, fmt.Errorf("the cursor %.40q is not one this server gave", raw)
	}
	name, at, ok := strings.Cut(string(b), ":")
	n, err := strconv.Atoi(at)
	if !ok || name != list || err != nil || n < 0 {
		return 0, fmt.Errorf("the cursor %.40q is not one of this list", raw)
	}
	return n, nil
}

// v1Graph answers GET /v1/sessions/{id}/graph?format=json|dot|mermaid|svg.
func (s *Server) v1Graph(w http.ResponseWriter, r *http.Request) {
	if id, ok := v1PathID(w, r); ok {
		s.serveGraph(w, r, id, v1Failed(w, r))
	}
}

// v1Export answers GET /v1/sessions/{id}/export?format=jsonl|openrath.
func (s *Server) v1Export(w http.ResponseWriter, r *http.Request) {
	if id, ok := v1PathID(w, r); ok {
		s.serveExport(w, r, id, v1Failed(w, r))
	}
}

// v1Failed is the failure callback of serveGraph and serveExport for /v1.
func v1Failed(w http.ResponseWriter, r *http.Request) func(int, error) {
	return func(status int, err error) {
		if status != 0 {
			v1Errorf(w, r, status, "%s", sentence(err.Error()))
			return
		}
		v1Fail(w, r, err)
	}
}

// v1Created is the body of an operation that made a session.
type v1Created struct {
	ID   session.ID      `json:"id"`
	Head session.ChunkID `json:"head,omitempty"`
	Len  int             `json:"len"`
}

// v1Fork answers POST /v1/sessions/{id}/fork {"at": N}: the stored session
// forked (whole, or its first N chunks) and committed: 201 with the fork.
func (s *Server) v1Fork(w http.ResponseWriter, r *http.Request) {
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	req, err := decodeForkRequest(r.Body)
	if err != nil {
		v1BodyError(w, r, err)
		return
	}
	src, err := s.storeOf(r.Context()).Load(r.Context(), id)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	fork := src.Fork()
	if req.At != nil {
		if fork, err = src.ForkAt(*req.At); err != nil {
			v1Fail(w, r, err)
			return
		}
	}
	if err := s.storeOf(r.Context()).Commit(r.Context(), fork, ""); err != nil {
		v1Fail(w, r, fmt.Errorf("commit the fork of %s: %w", id, err))
		return
	}
	writeJSON(w, http.StatusCreated, v1Created{ID: fork.ID(), Head: fork.Head(), Len: fork.Len()})
}

// decodeForkRequest reads a fork's body: one JSON object with no member but
// "at", or nothing at all.
func decodeForkRequest(body io.Reader) (forkRequest, error) {
	return decodeBodyOf[forkRequest](body)
}

// decodeBodyOf reads a request body that is one JSON object with no member
// T does not have, or nothing at all (T's zero value).
func decodeBodyOf[T any](body io.Reader) (T, error) {
	var req, zero T
	raw, err := io.ReadAll(body) // all of it: a body past the limit is refused whole
	if err != nil {
		return zero, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(&req)
	switch {
	case errors.Is(err, io.EOF):
		return zero, nil
	case err != nil:
		return zero, err
	case len(bytes.TrimSpace(raw[dec.InputOffset():])) > 0:
		return zero, errors.New("more than one JSON value")
	}
	return req, nil
}

// v1BodyError answers a request whose body could not be read: 413 past the
// limit, 400 otherwise.
func v1BodyError(w http.ResponseWriter, r *http.Request, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		v1Errorf(w, r, http.StatusRequestEntityTooLarge, "The request body is larger than %d bytes.", tooBig.Limit)
		return
	}
	v1Errorf(w, r, http.StatusBadRequest, "The request body is not valid for this operation: %v.", err)
}

// v1Import answers POST /v1/sessions:import: the body is a session file —
// ours (JSONL) or OpenRath-Python's, told apart by its first line — which
// is verified and committed (export.Import); importing it again changes
// nothing. 200 with the session as stored.
func (s *Server) v1Import(w http.ResponseWriter, r *http.Request) {
	ses, err := export.Import(r.Context(), s.storeOf(r.Context()), r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			v1BodyError(w, r, tooBig)
			return
		}
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v1Created{ID: ses.ID(), Head: ses.Head(), Len: ses.Len()})
}

// v1PathID returns the session id in the path, or answers 400.
func v1PathID(w http.ResponseWriter, r *http.Request) (session.ID, bool) {
	raw := r.PathValue("id")
	id := session.ID(raw)
	if err := id.Validate(); err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "The session id %q is not a session id (\"ses_\" and 26 base32 digits).", raw)
		return "", false
	}
	return id, true
}

// v1Dossier answers GET /v1/sessions/{id}/dossier?format=json|html: the
// session's evidence dossier (export.BuildDossier) as JSON, or as the
// self-contained HTML page, a download.
func (s *Server) v1Dossier(w http.ResponseWriter, r *http.Request) {
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "json" && format != "html" {
		v1Errorf(w, r, http.StatusBadRequest, "Unknown dossier format %q (want json or html).", format)
		return
	}
	d, err := export.BuildDossier(r.Context(), s.storeOf(r.Context()), id)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	if format != "html" {
		writeJSON(w, http.StatusOK, d)
		return
	}
	var page bytes.Buffer
	if err := export.WriteDossierHTML(&page, d); err != nil {
		v1Fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// A download, not a page of this origin: its inline script is not
	// this server's to run (and its CSP would refuse it).
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", string(id)+".dossier.html"))
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(page.Bytes())
}
