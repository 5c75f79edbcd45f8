package otel

import "go.opentelemetry.io/otel/attribute"

// GenAI semantic convention attribute keys (OpenTelemetry semantic
// conventions v1.41.1, docs/gen-ai). Recent semconv packages no longer
// export them, so they are spelled out here.
const (
	KeyOperationName       = attribute.Key("gen_ai.operation.name")
	KeyProviderName        = attribute.Key("gen_ai.provider.name")
	KeyRequestModel        = attribute.Key("gen_ai.request.model")
	KeyRequestMaxTokens    = attribute.Key("gen_ai.request.max_tokens")
	KeyRequestTemperature  = attribute.Key("gen_ai.request.temperature")
	KeyRequestTopP         = attribute.Key("gen_ai.request.top_p")
	KeyRequestStop         = attribute.Key("gen_ai.request.stop_sequences")
	KeyRequestStream       = attribute.Key("gen_ai.request.stream")
	KeyOutputType          = attribute.Key("gen_ai.output.type")
	KeyResponseModel       = attribute.Key("gen_ai.response.model")
	KeyResponseID          = attribute.Key("gen_ai.response.id")
	KeyFinishReasons       = attribute.Key("gen_ai.response.finish_reasons")
	KeyInputTokens         = attribute.Key("gen_ai.usage.input_tokens")
	KeyOutputTokens        = attribute.Key("gen_ai.usage.output_tokens")
	KeyCacheReadTokens     = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	KeyCacheCreationTokens = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	KeyReasoningTokens     = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	KeyConversationID      = attribute.Key("gen_ai.conversation.id")
	KeyAgentName           = attribute.Key("gen_ai.agent.name")
	KeyWorkflowName        = attribute.Key("gen_ai.workflow.name")
	KeyToolName            = attribute.Key("gen_ai.tool.name")
	KeyToolCallID          = attribute.Key("gen_ai.tool.call.id")
	KeyToolType            = attribute.Key("gen_ai.tool.type")
	KeyErrorType           = attribute.Key("error.type")
	KeyHTTPStatusCode      = attribute.Key("http.response.status_code")
)

// Values of gen_ai.operation.name.
const (
	OpWorkflow = "invoke_workflow"
	OpAgent    = "invoke_agent"
	OpChat     = "chat"
	OpTool     = "execute_tool"
)

// Attributes of this runtime, outside the conventions.
const (
	KeyNode          = attribute.Key("rath.node")
	KeyLineageKind   = attribute.Key("rath.lineage.kind")
	KeyLineageOp     = attribute.Key("rath.lineage.op")
	KeyParents       = attribute.Key("rath.lineage.parents")
	KeySession       = attribute.Key("rath.session.id")
	KeyCostUSD       = attribute.Key("rath.usage.cost_usd")
	KeyAggregate     = attribute.Key("rath.model_call.aggregate")
	KeyAttemptIndex  = attribute.Key("rath.attempt.index")
	KeyAttemptError  = attribute.Key("rath.attempt.error")
	KeyLatencyMS     = attribute.Key("rath.attempt.latency_ms")
	KeySandbox       = attribute.Key("rath.sandbox.id")
	KeySelector      = attribute.Key("rath.decision.selector")
	KeyChoice        = attribute.Key("rath.decision.choice")
	KeyCandidates    = attribute.Key("rath.decision.candidates")
	KeyReason        = attribute.Key("rath.reason")
	KeySubject       = attribute.Key("rath.approval.subject")
	KeyVerdict       = attribute.Key("rath.approval.verdict")
	KeyBy            = attribute.Key("rath.approval.by")
	KeyMemoryOp      = attribute.Key("rath.memory.op")
	KeyMemoryStore   = attribute.Key("rath.memory.store")
	KeyMemoryScopes  = attribute.Key("rath.memory.scopes")
	KeyMemoryK       = attribute.Key("rath.memory.k")
	KeyMemoryHits    = attribute.Key("rath.memory.hits")
	KeyMemoryURI     = attribute.Key("rath.memory.uri")
	KeyMemoryCount   = attribute.Key("rath.memory.count")
	KeyCompressCount = attribute.Key("rath.compress.count")
	KeyCompressModel = attribute.Key("rath.compress.model")
	KeyTokensBefore  = attribute.Key("rath.compress.tokens_before")
	KeyTokensAfter   = attribute.Key("rath.compress.tokens_after")
	KeyBackend       = attribute.Key("rath.placement.backend")
	KeyErrorMessage  = attribute.Key("rath.error.message")
)

// Span event names.
const (
	EventAttempt   = "rath.attempt"
	EventDecision  = "rath.decision"
	EventApproval  = "rath.approval"
	EventMemory    = "rath.memory"
	EventCompress  = "rath.compress"
	EventPlacement = "rath.placement"
	EventError     = "rath.error"
	EventSession   = "rath.session"
)

// toolType is gen_ai.tool.type for every tool: the runtime's tools are
// functions the model calls.
const toolType = "function"

// other is the conventions' fallback value, used for error.type when a
// failure has no kind and for gen_ai.provider.name (required) when a
// record names no provider.
const other = "_OTHER"

// outputJSON is gen_ai.output.type for a request that asked for output
// matching a JSON schema.
const outputJSON = "json"

// WorkflowLabel is the store label that names the registered workflow a
// run's output came from (the runtime's rath.WorkflowLabel). Live names a
// workflow span after it.
const WorkflowLabel = "rath.workflow"
