// Package mcp offers the tools of Model Context Protocol servers as
// tool.Tools. Connect starts one long-lived client session per server, over
// stdio (a command to run, in a process group of its own) or streamable
// HTTP (a URL); Client.Tools lists the server's tools and wraps each one,
// its input schema passed through intact.
//
// A call returns the server's text content joined by newlines, with other
// content (images, audio, resources) recorded by type. Nothing else is ever
// written into it: what the client has to say about a call is an evidence
// note (tool.Env.Note, recorded in the tool_result's Notes, apart from its
// content), so that a server's JSON stays JSON. Each call is bounded
// by the server's CallTimeout. Calls to one server hold a Write resource
// keyed "mcp:<server name>", so they run one at a time while other tools
// are unaffected.
//
// Failures are recorded by kind. The server's own argument validation — a
// JSON-RPC error -32602, or an isError result saying so ("MCP error -32602:
// Input validation error: ...", `validating "arguments": ...`) — is
// invalid_arguments, and a tool the server does not know is unknown_tool;
// any other isError result or server error is execution. A call that ran
// out of time is timeout. A call whose server died or lost the session is
// KindServerGone ("server_gone"), its error wrapping ErrServerGone.
//
// The client watches each session. A stdio server's exit is seen at once;
// over HTTP, every request and response the SDK makes reports to the
// client, so that a server that can no longer be reached, or that refuses
// the session (HTTP 404, or 400 as some servers answer), is known gone as
// soon as a request or stream fails, not after the SDK's reconnect
// attempts; a stream that merely broke is checked with a ping. A call in
// flight then ends at once as server_gone, and the next call starts a new
// session first (over stdio, a new process) and records a note of kind
// restarted (reconnected, over HTTP): "mcp server NAME restarted before
// this call: CAUSE". Its result is the server's, untouched. A call the
// server refused for its session, or that could not connect, never ran,
// and is sent once more on the new session, with a note of kind resent.
// Secret values the server was given are replaced with "[redacted]" in
// results, errors and notes, and a note of kind redacted says so.
//
// Close stops a stdio server as the MCP specification asks — its standard
// input closed, then SIGTERM, then SIGKILL, each after a grace period — and
// a server stopped so is no failure: Close returns nil for a server that
// does not exit when its input closes. Close reports a server that was
// already gone before it and that no call reported (wrapping
// ErrServerGone), a stdio server that exits with a failure status of its
// own accord or survives SIGKILL, and an HTTP session that could not be
// ended.
package mcp
