package client

import (
	"fmt"
	"net/http"
)

// Error is an error the server answered: its HTTP status, the stable code
// and message of the body, and the request id to find it in the server's
// log.
type Error struct {
	Status    int
	Code      string
	Message   string
	Reason    string // a refinement of the code, such as "no_graphviz"
	RequestID string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("server: %s (%d %s)", e.Message, e.Status, e.Code)
	if e.RequestID != "" {
		s += " [request " + e.RequestID + "]"
	}
	return s
}

// Is matches the sentinel of e's code.
func (e *Error) Is(target error) bool {
	s, ok := target.(*sentinel)
	return ok && s.code == e.Code
}

// sentinel is a code's error value, for errors.Is.
type sentinel struct{ code string }

func (s *sentinel) Error() string { return "server: " + s.code }

// The stable codes of the API's errors; errors.Is(err, ErrNotFound) holds
// for an *Error with code "not_found".
var (
	ErrInvalidArgument error = &sentinel{"invalid_argument"}
	ErrUnauthenticated error = &sentinel{"unauthenticated"}
	ErrForbidden       error = &sentinel{"forbidden"}
	ErrNotFound        error = &sentinel{"not_found"}
	ErrConflict        error = &sentinel{"conflict"}
	ErrExhausted       error = &sentinel{"exhausted"}
	ErrUnavailable     error = &sentinel{"unavailable"}
	ErrInternal        error = &sentinel{"internal"}
)

// codeOfStatus is the code of an answer without the API's error body.
func codeOfStatus(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "unauthenticated"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusConflict:
		return "conflict"
	case http.StatusTooManyRequests:
		return "exhausted"
	case http.StatusInternalServerError:
		return "internal"
	case http.StatusNotImplemented, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return "unavailable"
	}
	return "invalid_argument"
}
