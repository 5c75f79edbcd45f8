package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// requestIDKey keys the request's id in its context.
type requestIDKey struct{}

// withRequestID gives every request an id — the caller's X-Request-ID if it
// sent a sensible one, else a new one — and every response the header, so
// that a report of a failed call can be matched to the server's log.
func withRequestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if !saneRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-ID", id)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// requestID is r's id ("" outside withRequestID).
func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

// saneRequestID reports whether a caller's id can be echoed and logged as
// it is: 1 to 128 printable ASCII characters, no spaces.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on Linux
	return "req_" + hex.EncodeToString(b[:])
}
