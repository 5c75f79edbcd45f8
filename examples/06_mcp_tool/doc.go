// Package mcptool shows an agent using the tools of a Model Context
// Protocol server through tool/mcp.
//
// The server is a small glossary of OpenRath's terms, written with the
// official MCP Go SDK (github.com/modelcontextprotocol/go-sdk) and served
// in-process: Serve starts it over streamable HTTP on a loopback port for
// the length of the run. It offers two tools, list_terms and define, whose
// argument schemas the SDK infers from Go types.
//
// mcp.Connect opens one client session with the server; Client.Tools lists
// the server's tools as tool.Tools, their input schemas passed through
// intact and their names prefixed ("glossary_define") so that tools of
// several servers cannot clash. To the agent they are tools like any other:
// offered to the model, validated by the server, and recorded as
// tool_result chunks with arguments, output and duration. Calls to one
// server run one at a time; tools the server marks read-only count as
// idempotent, so a resumed run may simply call them again. An error the
// server reports (an unknown term) becomes an execution error result whose
// message the model reads.
//
// The workflow is a flow.Func that starts the server, connects, builds the
// agent with the listed tools, runs it and shuts everything down. A server
// started as a command speaks stdio instead: ServerConfig{Command: ...}.
// Offline, a scripted model lists the terms, looks up "fork" and "merge",
// and answers from the definitions it got.
//
//	go run ./cmd/rath run mcp-tool
//	go run ./cmd/rath show <the printed id>
package mcptool
