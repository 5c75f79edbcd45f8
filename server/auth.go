package server

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// guardHost refuses the viewer to non-loopback Hosts when the server has
// no token (DNS rebinding).
func (s *Server) guardHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.hostGuarded() && !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("Host %q is not a loopback name; this server answers only local requests.", r.Host), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// LoopbackAddr reports whether a listen address ("host:port") binds only
// loopback. An empty host binds every interface, so it is not loopback.
func LoopbackAddr(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("server: address %q: %w", addr, err)
	}
	return loopbackName(host), nil
}

// loopbackHost reports whether an HTTP Host header ("host" or "host:port")
// names this machine's loopback interface.
// A port that is not a number ("localhost:80.evil.example", which
// net.SplitHostPort takes apart) names no host of this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		if strings.Trim(port, "0123456789") != "" {
			return false
		}
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

// credentialed reports whether the server authenticates requests (see
// Server.credentials): it may listen on a public address.
func (s *Server) credentialed() bool { return s.credentials }

// hostGuarded reports whether the server answers only requests that name
// it by a loopback Host: one on loopback without a token of its own, whose
// requests may act as the implicit local principal (a page of another
// site, its name rebound to 127.0.0.1, sends its own Host). A server with
// its own token, or on a public address, is guarded by credentials.
func (s *Server) hostGuarded() bool { return s.local && s.token == "" }
