// Package compression is example 08 of the ladder: a long conversation
// squeezed out of the model's view by flow.Compressor, without losing a
// single chunk.
//
// An on-call agent investigates an incident (checkout answered 502s for
// twelve minutes) by reading the logs of five services, one tool call per
// step: twenty chunks of conversation, most of them log excerpts the next
// agent no longer needs word for word. A Compressor then asks a model for a
// summary and appends one compress chunk. That chunk names the range it
// hides (from and to, by chunk id, and how many chunks), the summary, the
// model that wrote it, and a token estimate of the model's view before and
// after. From then on Session.Transcript shows the summary where the range
// began instead of the hidden chunks — except durable-tier chunks, which
// stay in view wherever they are: the agent's instructions, and here a
// standing rule from the incident commander given as a note with the
// input. A third agent writes the postmortem from that compressed view, and
// follows the rule it can still see.
//
// Compression never deletes: every original chunk stays in the chain (and
// in the store), so `rath show` still lists all five log excerpts, the
// chain still verifies, and a replay serves the summary's model call from
// the record. KeepRecent says how many chunks at the end stay in view (a
// tool call is never separated from its results) and MinChunks how many
// must be hidden before compressing is worth a model call.
//
// Run it with
//
//	go run ./cmd/rath run compression
//	go run ./cmd/rath show <the printed id>
//
// Offline (no API key, or RATH_OFFLINE=1) the three models are scripted;
// with OPENAI_API_KEY or ANTHROPIC_API_KEY set they are live.
package compression
