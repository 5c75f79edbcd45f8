package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// apiError is the body of an error outside /v1 (the health probes and
// the viewer's pages).
type apiError struct {
	Error string `json:"error"`
}

// writeError writes {"error": message} with the given status.
func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, apiError{Error: fmt.Sprintf(format, args...)})
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
