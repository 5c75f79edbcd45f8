package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// guardHost refuses the viewer to non-loopback Hosts when the server has
// no token (DNS rebinding).
func (s *Server) guardHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.token == "" && !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("Host %q is not a loopback name; this server answers only local requests.", r.Host), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// authorized reports whether r carries the server's bearer token. The
// comparison takes the same time whatever the header holds: both sides are
// hashed to a fixed length first, so not even the token's length leaks.
func (s *Server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	a := sha256.Sum256([]byte(strings.TrimSpace(got)))
	b := sha256.Sum256([]byte(s.token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// loopbackAddr reports whether a listen address ("host:port") binds only
// loopback. An empty host binds every interface, so it is not loopback.
func loopbackAddr(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("server: address %q: %w", addr, err)
	}
	return loopbackName(host), nil
}

// loopbackHost reports whether an HTTP Host header ("host" or "host:port")
// names this machine's loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return loopbackName(strings.Trim(host, "[]"))
}

// loopbackName reports whether host is "localhost" (or a name under it) or
// a loopback IP.
func loopbackName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
