// Package openrath imports and exports the session files of OpenRath-Python,
// the original implementation, as sessions of package session.
//
// The two name sessions alike: a session id and a UUID are the same 128
// bits (IDOf, UUIDOf), so an imported file keeps its identity and its
// parent_session_ids become lineage edges that link up whatever the order
// of import. The header of an imported session is kept in its lineage
// extras (ExtraID and the others) and written back by Encode; the rows are
// its chunks, made by ImportNode; the trailer is a last chunk. Tool failures
// travel in the original's failure shape both ways, and system prompts as
// header extras (PromptKey), so the original, continuing a file, sends a
// prompt once. docs/session-jsonl.md lists what changes form on the way.
package openrath
