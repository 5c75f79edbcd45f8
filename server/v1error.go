package server

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"

	"github.com/openrath/rath/export"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// The stable error codes of /v1: a client branches on the code, never on
// the message.
const (
	CodeInvalidArgument = "invalid_argument" // 400, 405, 413, 415: the request is wrong
	CodeUnauthenticated = "unauthenticated"  // 401: no or a wrong token
	CodeForbidden       = "forbidden"        // 403: not allowed from here
	CodeNotFound        = "not_found"        // 404
	CodeConflict        = "conflict"         // 409: the state does not allow it
	CodeExhausted       = "exhausted"        // 429: a cap is reached
	CodeUnavailable     = "unavailable"      // 501, 503, 504: try again later, or elsewhere
	CodeInternal        = "internal"         // 500: a bug; the request id finds it in the log
)

// v1Error is the body of every /v1 error: {"error": {...}}.
type v1Error struct {
	Error v1ErrorBody `json:"error"`
}

type v1ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Reason refines the code where a client can act on it (no_graphviz).
	Reason    string `json:"reason,omitempty"`
	RequestID string `json:"request_id"`
}

// codeOf is the stable code of an HTTP error status.
func codeOf(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return CodeUnauthenticated
	case http.StatusForbidden:
		return CodeForbidden
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusConflict:
		return CodeConflict
	case http.StatusTooManyRequests:
		return CodeExhausted
	case http.StatusNotImplemented, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return CodeUnavailable
	case http.StatusInternalServerError:
		return CodeInternal
	}
	return CodeInvalidArgument
}

// v1Errorf writes a /v1 error with the given status.
func v1Errorf(w http.ResponseWriter, r *http.Request, status int, format string, args ...any) {
	writeV1Error(w, r, status, "", fmt.Sprintf(format, args...))
}

func writeV1Error(w http.ResponseWriter, r *http.Request, status int, reason, msg string) {
	writeJSON(w, status, v1Error{Error: v1ErrorBody{Code: codeOf(status), Message: msg, Reason: reason, RequestID: requestID(r)}})
}

// v1Fail answers a /v1 request that failed with err, the status chosen
// from the error's kind. A request whose client went away gets no answer.
func v1Fail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		return
	}
	status := v1StatusOf(err)
	if status == http.StatusInternalServerError {
		log.Printf("server: %s %s (request %s): %v", r.Method, r.URL.Path, requestID(r), err)
	}
	reason := ""
	switch {
	case errors.Is(err, export.ErrNoGraphviz):
		reason = "no_graphviz"
	case errors.Is(err, ErrKeyReused):
		reason = "idempotency_key_reused"
	case errors.Is(err, ErrExhausted):
		reason = "quota"
	}
	msg := sentence(err.Error())
	if status == http.StatusNotFound {
		msg = notFound(r)
	}
	writeV1Error(w, r, status, reason, msg)
}

// notFound is every /v1 404's message for what a request names: the same
// whether it does not exist or is another scope's, and whichever layer
// found it missing (a store, a scoped view, the cluster), so that no
// answer tells a principal what exists outside its scope.
func notFound(r *http.Request) string {
	return fmt.Sprintf("Not found: what %s %s names does not exist, or is not this principal's to see.", r.Method, r.URL.Path)
}

// v1StatusOf is statusOf, and what /v1 adds: an import that does not
// decode or verify is the request's fault.
func v1StatusOf(err error) int {
	if errors.Is(err, ErrUnsupported) {
		return http.StatusNotImplemented
	}
	if errors.Is(err, ErrExhausted) {
		return http.StatusTooManyRequests
	}
	if errors.Is(err, store.ErrConflict) || errors.Is(err, session.ErrIncompatible) || errors.Is(err, ErrKeyReused) {
		return http.StatusConflict
	}
	if errors.Is(err, export.ErrImport) || errors.Is(err, session.ErrTampered) || errors.Is(err, errBadPage) || errors.Is(err, ErrInvalid) {
		return http.StatusBadRequest
	}
	return statusOf(err)
}
