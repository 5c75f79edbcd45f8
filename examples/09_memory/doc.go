// Package memory is example 09 of the ladder: long-term memory with
// provenance — who wrote an entry, from which session, justified by which
// chunks — and a rollback of everything one run wrote.
//
// The example plays three runs and an investigation, as they would happen
// days apart:
//
//  1. learn: a user corrects a release-build answer ("the release image has
//     no C compiler; release builds need CGO_ENABLED=0"). The builder agent
//     checks the claim with its try_build tool and restates the rule; the
//     workflow then remembers that rule with Memory.Remember, citing as
//     evidence the user's correction and the successful build's tool
//     result (kind human_correction). The remember chunk is appended to the
//     builder's own session and committed, so the writer session holds the
//     write next to the chunks that justify it. The agent also archives its
//     transcript (CommitOnForward).
//  2. recall: in a new conversation, a CI helper agent (Memory,
//     MemoryScopes, CommitOnForward) is asked to write the release build
//     step. Before its first step it recalls from its scopes; the recall
//     chunk records each hit with its score, content hash, writer session
//     and evidence, and the hit enters the model's view. The answer uses
//     CGO_ENABLED=0.
//  3. explain and roll back: memory.Explain, given the store to load writer
//     sessions from, answers why the entry was in run 2 (which recall
//     returned it, with what query and score) and what justified it (the
//     writer's remember chunk and the evidence chunks themselves). Then
//     Forget(memory.DerivedFrom(run 1)) removes every entry run 1 wrote —
//     the rule and run 1's transcript archive — and is recorded in run 1's
//     session, so a second Explain reports the write as rolled back.
//  4. after the rollback the same question, in a fresh conversation,
//     recalls nothing, and the helper writes the plain build step.
//
// The output holds the three runs in order — run 1 (the correction, the
// builder's work, the remember and forget chunks), then runs 2 and 3
// merged in — followed by notes that tell the story.
//
// Memory persists across runs in <home>/memory.db: that is the point of
// it. So that running the example again starts from a clean slate, each
// run works in a project scope named after its input's first chunk
// (memory://project/run-<chunk>/...); a real program would use its
// project's name and keep what it learned. Memory is state outside the
// session, and this run changes it (the rollback), so a replay must not
// consult it: the agents' recalls and commits are served from the record,
// and so are this workflow's own remember and forget (the record says what
// the run did; memory is left alone), which makes the run replayable.
//
// Run it with
//
//	go run ./cmd/rath run memory
//	go run ./cmd/rath show <the printed id>
//
// Offline (no API key, or RATH_OFFLINE=1) the models are scripted; with
// OPENAI_API_KEY or ANTHROPIC_API_KEY set they are live.
package memory
