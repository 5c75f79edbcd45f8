// Package otel turns sessions into OpenTelemetry traces that follow the
// GenAI semantic conventions (OpenTelemetry semantic conventions v1.41.1,
// docs/gen-ai; docs/otel.md lists what is emitted and where it deviates).
//
// A workflow becomes one invoke_workflow span, named after the registered
// workflow when that is known ("invoke_workflow fix", with
// gen_ai.workflow.name). Under it each agent node (a node path holding
// "agent:<name>#<n>") becomes an invoke_agent span, nested under the agent
// that encloses it, if any, carrying the provider and model of its first
// model call. Each model_call chunk becomes a chat span and each
// tool_result chunk an execute_tool span, under the agent that produced it
// or under the workflow span. Selector decisions, approvals, memory
// operations, compressions, placements and recorded failures become span
// events on the enclosing span. Every span carries the id of the session
// it comes from as gen_ai.conversation.id.
//
// Spans take their times from the chunks: a chat span ends at its chunk's
// time and starts Latency before it, an execute_tool span starts Duration
// before its chunk's time. No span starts before, or ends after, a parent
// span of this package's. Message contents, prompts and tool arguments are
// not recorded.
//
// Export emits a finished session after the fact; Live follows a store's
// commits and emits spans as chunks are committed, one trace per workflow
// run; OTLP builds a tracer provider that exports to an OTLP/HTTP
// collector.
package otel
