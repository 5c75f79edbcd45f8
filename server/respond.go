package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strings"

	"github.com/openrath/rath/export"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// writeJSON writes v as the JSON response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Encoding the response failed: %v.", err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// apiError is the body of every error response.
type apiError struct {
	Error string `json:"error"`
	// Code is a machine-readable reason where a client acts on it
	// ("no_graphviz").
	Code string `json:"code,omitempty"`
}

// writeError writes {"error": message} with the given status.
func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, apiError{Error: fmt.Sprintf(format, args...)})
}

// fail answers a request that failed with err, choosing the status from
// the error's kind. A request whose client went away gets no answer.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		return
	}
	status := statusOf(err)
	if status == http.StatusInternalServerError {
		log.Printf("server: %s %s: %v", r.Method, r.URL.Path, err)
	}
	body := apiError{Error: sentence(err.Error())}
	if errors.Is(err, export.ErrNoGraphviz) {
		body.Code = "no_graphviz"
	}
	writeJSON(w, status, body)
}

// statusOf maps the project's sentinel errors to HTTP statuses.
func statusOf(err error) int {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, session.ErrInvalid), errors.Is(err, session.ErrRange),
		errors.Is(err, export.ErrFormat), errors.Is(err, store.ErrTransition):
		return http.StatusBadRequest
	case errors.Is(err, session.ErrIncompatible), errors.Is(err, store.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, export.ErrNoGraphviz):
		return http.StatusNotImplemented
	case errors.Is(err, store.ErrClosed):
		return http.StatusServiceUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// sentence makes an error message read as one sentence: capitalised and
// ending with a full stop.
func sentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return "Something went wrong."
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// pathID returns the session id in the request path, or answers 400 and
// returns false.
func pathID(w http.ResponseWriter, r *http.Request) (session.ID, bool) {
	return checkID(w, r.PathValue("id"), "session id")
}

// checkID validates a session id from the request, answering 400 if it is
// malformed.
func checkID(w http.ResponseWriter, raw, what string) (session.ID, bool) {
	id := session.ID(raw)
	if err := id.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, "The %s %q is not a session id (\"ses_\" and 26 base32 digits).", what, raw)
		return "", false
	}
	return id, true
}
