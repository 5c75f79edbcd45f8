// Package session defines the value that flows through OpenRath: an immutable,
// content-addressed chain of chunks with lineage, placement and usage.
//
// A *Session never changes. Every operator (Append, Fork, ForkAt, Detach,
// Merge, To) returns a new *Session that shares structure with its source, so
// a fork costs a few words of memory whatever the session's length, and
// appending to a fork never disturbs the session it came from.
//
// Each chunk's id is the SHA-256 of its RFC 8785 canonical JSON encoding,
// which includes the id of the chunk before it; see docs/canonical-encoding.md.
// A chain therefore proves its own history: Verify recomputes it, exports are
// tamper-evident, and Merge finds the exact common prefix of two branches by
// comparing ids.
//
// The package imports nothing else from the project. Its only I/O is the
// JSONL codec (Encode, Decode, DecodeFile); subpackage openrath reads and
// writes the session files of the Python original.
package session
