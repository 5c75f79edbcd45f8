// Package selector is example 11 of the ladder: routing decided at run time
// and recorded as evidence.
//
// A support ticket arrives. A flow.ModelSelector called "triage" shows a
// model the conversation and its routes — each a name and a description
// of what it is for (bug, billing, how-to) — and asks for a JSON choice
// with a one-sentence reason; the chosen route's agent then handles the
// ticket. A second decision, "priority", is made by a plain Go function
// (flow.Selector with a Chooser) from signals in the ticket: a deadline,
// how many people are blocked. The urgent route pages the on-call
// engineer through an agent; the normal route (a nil module) passes the
// session on unchanged.
//
// Each decision is a decision chunk: the selector's name, every candidate
// with its description, the choice and the reason, and — when a model
// chose — the id of the model_call chunk holding the full request and
// response. Chunks made under a route carry its name in their node path
// ("triage/bug/agent:engineer#1"), so `rath show` and the lineage graph
// show which way the run went and why.
//
// Decisions replay like everything else: replay.Run serves the model's
// choice from the record (the choosing model is not called) and checks
// that the Go chooser still makes the same decision. The test replays the
// run with models that fail if called, built with this package's Workflow
// function, and gets the recorded head back.
//
// Run it with
//
//	go run ./cmd/rath run selector
//	go run ./cmd/rath show <the printed id>
//
// Offline (no API key, or RATH_OFFLINE=1) the models are scripted; with
// OPENAI_API_KEY or ANTHROPIC_API_KEY set they are live.
package selector
