// Package server is `rath serve`: the versioned /v1 API and an embedded
// single-page web viewer that reads only /v1, over a store.Store.
//
// /v1 is the public API, described by the OpenAPI document of package api
// (served at /openapi.json; docs/api.md): sessions (listed, searched,
// read, their chunks in cursor pages and as Server-Sent Events, graph,
// export, fork, import, compare and merge), the cluster's status and runs,
// approvals, workers, queues, schedules and webhooks. Its errors are
// {"error": {"code", "message", "request_id"}} with the stable codes Code*;
// every response carries X-Request-ID; bodies are bounded
// (Options.MaxBody).
//
// The health probes answer outside /v1 and need no token:
//
//	GET  /health/live                             {"status": "live"}
//	GET  /health/ready                            {"status": "ready"}, or 503 {"status": "unready", "why"}
//
// The viewer is served at / and /static/. What it shows comes from /v1
// alone, so what a person sees, a program can get.
//
// Security: the server binds loopback by default. Any other address needs a
// bearer token (ErrNoToken otherwise), and with a token every /v1 request
// must carry "Authorization: Bearer <token>". Without a token the server
// answers only requests whose Host is a loopback name, so a web page cannot
// reach it through DNS rebinding, and POSTs must be JSON (or NDJSON for an
// import), so a cross-site form cannot fork or merge.
package server
