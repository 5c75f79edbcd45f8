package osfake

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
)

// headerAccessToken is execd's access token header.
const headerAccessToken = "X-EXECD-ACCESS-TOKEN"

// execd's error codes (components/execd/pkg/web/model/error.go).
const (
	codeInvalidRequest  = "INVALID_REQUEST_BODY"
	codeMissingQuery    = "MISSING_QUERY"
	codeRuntimeError    = "RUNTIME_ERROR"
	codeInvalidFile     = "INVALID_FILE"
	codeInvalidContent  = "INVALID_FILE_CONTENT"
	codeInvalidMetadata = "INVALID_FILE_METADATA"
	codeFileNotFound    = "FILE_NOT_FOUND"
	codeUnknownExecd    = "UNKNOWN"
	codeExecdNoSupport  = "NOT_SUPPORTED"
)

type boxKey struct{}

// boxOf is the sandbox an execd request is for.
func boxOf(r *http.Request) *box { return r.Context().Value(boxKey{}).(*box) }

// serveProxy answers a request to a sandbox's port as the lifecycle
// server's proxy would: 404 for a sandbox it does not know (or one that
// is gone), 502 when nothing answers — any port but execd's, or a sandbox
// that is not Running (Pending, Pausing, Paused, Resuming, Failed).
func (s *Server) serveProxy(w http.ResponseWriter, r *http.Request, id, port, route string) {
	s.mu.Lock()
	s.sweep()
	b := s.boxes[id]
	state := ""
	if b != nil {
		state = b.status.State
	}
	s.mu.Unlock()
	if b == nil || state == stateTerminated {
		sandboxNotFound(w, id)
		return
	}
	if port != strconv.Itoa(ExecdPort) || state != stateRunning {
		apiError(w, http.StatusBadGateway, codeUnknown, fmt.Sprintf("Could not connect to the backend sandbox %s/sandboxes/%s/port/%s: All connection attempts failed", s.host(), id, port))
		return
	}
	// execd's access token middleware runs before its routes, so every
	// route, /ping too, needs the token; its refusal is not an
	// ErrorResponse (components/execd/pkg/web/router.go).
	if tok := s.opts.AccessToken; tok != "" && r.Header.Get(headerAccessToken) != tok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized: invalid or missing header " + headerAccessToken})
		return
	}
	u := *r.URL
	u.Path, u.RawPath = route, ""
	r2 := r.WithContext(context.WithValue(r.Context(), boxKey{}, b))
	r2.URL = &u
	s.exec.ServeHTTP(w, r2)
}

// execdMux routes execd's API.
func (s *Server) execdMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("POST /command", s.runCommand)
	mux.HandleFunc("DELETE /command", s.interruptCommand)
	// GET /command/status/{id} and GET /command/{id}/logs.
	mux.HandleFunc("GET /command/{a}/{b}", func(w http.ResponseWriter, r *http.Request) {
		switch a, b := r.PathValue("a"), r.PathValue("b"); {
		case a == "status":
			s.commandStatus(w, r, b)
		case b == "logs":
			s.commandLogs(w, r, a)
		default:
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("POST /files/upload", s.upload)
	mux.HandleFunc("GET /files/download", s.download)
	mux.HandleFunc("DELETE /files", s.removeFiles)
	mux.HandleFunc("GET /files/info", s.filesInfo)
	mux.HandleFunc("POST /files/mv", s.moveFiles)
	mux.HandleFunc("GET /directories/list", s.listDirectory)
	mux.HandleFunc("POST /directories", s.makeDirs)
	mux.HandleFunc("DELETE /directories", s.removeDirs)
	for _, p := range []string{"/code", "/code/", "/session", "/session/", "/metrics", "/metrics/", "/pty", "/pty/",
		"POST /files/permissions", "GET /files/search", "POST /files/replace"} {
		mux.HandleFunc(p, notServed)
	}
	return mux
}

// notServed answers the spec's routes the fake does not serve.
func notServed(w http.ResponseWriter, r *http.Request) {
	apiError(w, http.StatusNotImplemented, codeExecdNoSupport, r.URL.Path+" is not served by the fake")
}
