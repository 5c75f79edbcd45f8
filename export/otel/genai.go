package otel

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/session"
)

// chat emits the chat span of a model_call chunk of session conv, from
// start to end, with one event per attempt. A call whose last attempt
// failed has status Error and error.type the attempt's HTTP status
// ("_OTHER" if none). A call that names no provider has
// gen_ai.provider.name "_OTHER" (the attribute is required).
func (wt *workflowTrace) chat(ctx context.Context, c session.Chunk, conv session.ID, start, end time.Time) {
	mc := c.ModelCall
	name := OpChat
	if mc.Model != "" {
		name += " " + mc.Model
	}
	attrs := []attribute.KeyValue{
		KeyOperationName.String(OpChat),
		KeyProviderName.String(orOther(mc.Provider)),
		KeyConversationID.String(string(conv)),
		KeyInputTokens.Int64(mc.Usage.InputTokens),
		KeyOutputTokens.Int64(mc.Usage.OutputTokens),
	}
	attrs = append(attrs, attrsOf(
		KeyNode.String(c.Node),
		KeyRequestModel.String(mc.Model),
		KeyRequestMaxTokens.Int(mc.Params.MaxTokens),
		KeyResponseModel.String(mc.Response.Model),
		KeyResponseID.String(mc.Response.RequestID),
		KeyCacheReadTokens.Int64(mc.Usage.CacheReadTokens),
		KeyCacheCreationTokens.Int64(mc.Usage.CacheWriteTokens),
		KeyReasoningTokens.Int64(mc.Usage.ReasoningTokens),
		KeyCostUSD.Float64(mc.Usage.CostUSD),
		KeyRequestStop.StringSlice(mc.Params.Stop),
	)...)
	if mc.Stream {
		attrs = append(attrs, KeyRequestStream.Bool(true))
	}
	if len(mc.Params.ResponseSchema) > 0 {
		attrs = append(attrs, KeyOutputType.String(outputJSON))
	}
	if r := mc.Response.FinishReason; r != "" {
		attrs = append(attrs, KeyFinishReasons.StringSlice([]string{r}))
	}
	if t := mc.Params.Temperature; t != nil {
		attrs = append(attrs, KeyRequestTemperature.Float64(*t))
	}
	if p := mc.Params.TopP; p != nil {
		attrs = append(attrs, KeyRequestTopP.Float64(*p))
	}
	if mc.Aggregate {
		attrs = append(attrs, KeyAggregate.Bool(true))
	}
	_, span := wt.tr.Start(ctx, name, trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	// Attempts are placed back to back from the start: the backoff between
	// them is not recorded, so their times are approximate.
	at := start
	for i, a := range mc.Attempts {
		at = earlier(at.Add(max(a.Latency, 0)), end)
		span.AddEvent(EventAttempt, trace.WithTimestamp(at), trace.WithAttributes(attrsOf(
			KeyAttemptIndex.Int(i+1),
			KeyHTTPStatusCode.Int(a.Status),
			KeyAttemptError.String(a.Error),
			KeyLatencyMS.Float64(float64(a.Latency)/float64(time.Millisecond)),
		)...))
	}
	if n := len(mc.Attempts); n > 0 && mc.Attempts[n-1].Error != "" {
		last := mc.Attempts[n-1]
		kind := other
		if last.Status > 0 {
			kind = strconv.Itoa(last.Status)
		}
		span.SetAttributes(KeyErrorType.String(kind))
		span.SetStatus(codes.Error, last.Error)
	}
	span.End(trace.WithTimestamp(end))
}

// tool emits the execute_tool span of a tool_result chunk of session conv,
// from start to end. A failed call has status Error and its error kind as
// error.type ("_OTHER" if it has none).
func (wt *workflowTrace) tool(ctx context.Context, c session.Chunk, conv session.ID, start, end time.Time) {
	r := c.ToolResult
	attrs := []attribute.KeyValue{
		KeyOperationName.String(OpTool),
		KeyToolName.String(r.Tool),
	}
	attrs = append(attrs, attrsOf(
		KeyConversationID.String(string(conv)),
		KeyNode.String(c.Node),
		KeyToolCallID.String(r.CallID),
		KeyToolType.String(toolType),
		KeySandbox.String(r.SandboxID),
	)...)
	_, span := wt.tr.Start(ctx, OpTool+" "+r.Tool, trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if e := r.Error; e != nil {
		span.SetAttributes(KeyErrorType.String(orOther(e.Kind)))
		span.SetStatus(codes.Error, e.Message)
	}
	span.End(trace.WithTimestamp(end))
}
