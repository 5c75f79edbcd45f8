// Package otel turns sessions into OpenTelemetry traces that follow the
// GenAI semantic conventions.
//
// A session becomes one invoke_workflow span. Under it each agent node (a
// node path holding "agent:<name>#<n>") becomes an invoke_agent span, nested
// under the agent that encloses it, if any. Each model_call chunk becomes a
// chat span and each tool_result chunk an execute_tool span, under the agent
// that produced it or under the workflow span. Selector decisions,
// approvals, memory operations, compressions, placements and recorded
// failures become span events on the enclosing span. Every span carries the
// session id as gen_ai.conversation.id.
//
// Spans take their times from the chunks: a chat span ends at its chunk's
// time and starts Latency before it, an execute_tool span starts Duration
// before its chunk's time. Message contents, prompts and tool arguments are
// not recorded.
//
// Export emits a finished session after the fact; Live follows a store's
// commits and emits spans as chunks are committed; OTLP builds a tracer
// provider that exports to an OTLP/HTTP collector.
package otel
