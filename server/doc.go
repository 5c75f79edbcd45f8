// Package server is `rath serve`: the versioned /v1 API, the viewer's own
// /api and an embedded single-page web viewer, over a store.Store.
//
// /v1 is the public API, described by the OpenAPI document of package api
// (served at /openapi.json; docs/api.md): sessions, their chunks in cursor
// pages, graph, export, fork, import and their chunks as Server-Sent Events.
// Its errors are {"error": {"code", "message", "request_id"}} with the
// stable codes Code*; every response carries X-Request-ID; bodies are
// bounded (Options.MaxBody).
//
// The viewer's API (every response is JSON unless a format says otherwise;
// errors are {"error": "one sentence"} with a fitting status code):
//
//	GET  /api/sessions?status=&op=&q=&limit=      []store.Info, newest first
//	GET  /api/sessions/{id}                       {"info", "usage", "placement", "children"}
//	GET  /api/sessions/{id}/chunks?from=&limit=   {"chunks": [...], "next": N|null}
//	GET  /api/sessions/{id}/graph?format=         json|dot|mermaid|svg (export.LoadGraph)
//	GET  /api/sessions/{id}/export?format=        jsonl|openrath, as an attachment
//	GET  /api/sessions/{id}/tail                  Server-Sent Events, one "chunk" event per chunk
//	POST /api/sessions/{id}/fork  {"at": N}       {"id": new}
//	POST /api/merge               {"a", "b"}      {"id": new}
//	GET  /api/compare?a=&b=&limit=                common prefix and the two suffixes
//	GET  /api/cluster                             the cluster's status (Options.Cluster; 404 without)
//	GET  /api/cluster/events                      Server-Sent Events, a "status" event per change
//	POST /api/cluster/runs/{id}/approve  {"approve", "by", "reason"}   {"ok": true}
//
// The health probes answer outside /api and need no token:
//
//	GET  /health/live                             {"status": "live"}
//	GET  /health/ready                            {"status": "ready"}, or 503 {"status": "unready", "why"}
//
// The viewer is served at / and /static/.
//
// Security: the server binds loopback by default. Any other address needs a
// bearer token (ErrNoToken otherwise), and with a token every /api request
// must carry "Authorization: Bearer <token>". Without a token the server
// answers only requests whose Host is a loopback name, so a web page cannot
// reach it through DNS rebinding, and POSTs must be application/json, so a
// cross-site form cannot fork or merge.
package server
