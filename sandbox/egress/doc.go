// Package egress is the way out of a sandbox that has the network on: an
// HTTP forward proxy the runtime runs on the host, and the bridge that
// brings it into a sandbox with no network of its own.
//
// The Proxy serves CONNECT (a tunnel to any TCP port: TLS, SSH, ...) and
// plain HTTP requests in absolute form (GET http://host/path). Every
// connection is decided by host and port (sandbox.Egress) before anything
// is dialled: a refused one gets 403 Forbidden with a one-line reason, an
// allowed one is dialled by the proxy, which resolves the name itself (the
// sandbox has no DNS). Every decision is recorded (Proxy.Connections).
// Request heads are bounded in size and in time (MaxHeaderBytes,
// HeaderTimeout), tunnels and requests in number (MaxConns).
//
// The bridge (Bridge, BridgeMain) runs inside the sandbox as the parent of
// the command: it listens on 127.0.0.1 in the sandbox's own network
// namespace, forwards each connection to the proxy's Unix socket, which is
// bound into the sandbox, and starts the command with HTTP_PROXY,
// HTTPS_PROXY, ALL_PROXY (and their lower-case forms) pointing at itself.
// A program that ignores those variables has no route out.
package egress
