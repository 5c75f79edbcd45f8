// Package approval is example 13 of the ladder: a human in the loop. An
// agent may write files freely, but its run_command calls need a person's
// approval first (agent.Config.NeedApproval).
//
// The releaser agent is asked to cut release v1.4.0 in its sandbox (bwrap
// where it works, else the local backend). It writes the CHANGELOG entry
// with write_file, then asks to package the release with run_command. That
// call is not run: the agent records an approval request (the call and its
// arguments), commits the session, marks it paused in the store, and
// Forward returns agent.ErrPaused. Nothing waits in memory — the paused
// session is durable, and a verdict can come minutes or days later, from
// another process.
//
// The verdict is given with agent.Resume on the paused session (loaded
// from the store, as a reviewing tool would): it records an approval chunk
// with the verdict, who gave it and why; runs the call if approved (its
// tool_result lists the files it added) or answers it with a "rejected"
// error result carrying the reason; and continues the loop, so the model
// sees the outcome and finishes accordingly.
//
// `rath run` has no one to ask, so this example gives the verdict itself:
// it approves automatically with By "example" and says so in a note at the
// end of the output. To see a rejection instead, run it with
// RATH_EXAMPLE_VERDICT=reject. (Workflows can also pause between steps
// with a flow.Approval gate, answered with flow.Decide and continued with
// replay.Resume; see docs/flows.md.)
//
// Run it with
//
//	go run ./cmd/rath run approval
//	RATH_EXAMPLE_VERDICT=reject go run ./cmd/rath run approval
//	go run ./cmd/rath show <the printed id>
//
// Offline (no API key, or RATH_OFFLINE=1) the model is scripted; with
// OPENAI_API_KEY or ANTHROPIC_API_KEY set it is live.
package approval
