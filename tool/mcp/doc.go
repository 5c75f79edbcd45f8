// Package mcp offers the tools of Model Context Protocol servers as
// tool.Tools. Connect starts one long-lived client session per server, over
// stdio (a command to run) or streamable HTTP (a URL); Client.Tools lists the
// server's tools and wraps each one, its input schema passed through intact.
//
// A call returns the server's text content joined by newlines, with other
// content (images, audio, resources) recorded by type; an isError result
// becomes an execution *tool.Error carrying the server's message. Each call is
// bounded by the server's CallTimeout. Calls to one server hold a Write
// resource keyed "mcp:<server name>", so they run one at a time while other
// tools are unaffected.
//
// When the server process dies or the connection drops, the call in progress
// fails with "mcp server <name> is gone: ..." and the next call starts a new
// session (and, over stdio, a new process).
package mcp
