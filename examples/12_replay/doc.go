// Package replay is example 12 of the ladder: replaying a recorded run,
// finding where changed code departs from it, and forking it at a step.
//
// The example first runs a small workflow and keeps its record: a
// calculator agent computes an invoice's VAT with a vat tool, then a writer
// agent drafts the reply to the customer. It then uses that record three
// ways, and records each outcome as a note at the end of the output:
//
//   - replay.Run with the same code, built with models that fail if they
//     are called and a tool that counts its runs: every model call and
//     tool result is served from the record by node path and order, every
//     chunk is checked against the recorded one and given its recorded
//     time, and the replayed chain ends on the record's very head — with
//     no model called and no tool run.
//   - replay.Run with changed code — the vat tool now rounds to whole
//     euros — and replay.RerunTools, which runs the tools again and
//     compares their results with the record (a reproducibility check).
//     The first difference comes back as a *replay.Divergence: the node,
//     the recorded chunk's index, the two digests and a line diff ("444.60"
//     recorded, "445.00" replayed).
//   - replay.Fork at the chunk where the writer starts, with the writer's
//     prompt changed to answer in German: the first chunks replay exactly
//     (the calculation is not redone; its chunk ids are the record's) and
//     the rest runs live, so the fork shares the record's prefix and the
//     lineage graph shows the branch point.
//
// Replays run under the recorded run's node path ("invoice"), so their
// nodes match the record's. The same machinery backs `rath replay ID`
// (exit 3 on a divergence) and replay.Resume, which continues a run cut
// short or paused (example 13 pauses one for approval).
//
// Replaying this example's own run repeats the recorded run and the three
// outcomes; the fork's continuation is live by definition, so its model is
// called again (offline the scripted model answers the same).
//
// Run it with
//
//	go run ./cmd/rath run replay
//	go run ./cmd/rath show <the printed id>
//	go run ./cmd/rath replay <the printed id>
//
// Offline (no API key, or RATH_OFFLINE=1) the models are scripted; with
// OPENAI_API_KEY or ANTHROPIC_API_KEY set they are live.
package replay
