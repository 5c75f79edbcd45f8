package anthropic

import (
	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/openrath/rath/session"
)

// counts are the API's usage figures, as last reported.
type counts struct {
	input, cacheRead, cacheWrite, output, thinking int64
}

// usage normalises the counts: the API's input_tokens leaves out the cached
// tokens, which session.Usage.InputTokens includes.
func (c counts) usage() session.Usage {
	return session.Usage{
		InputTokens:      c.input + c.cacheRead + c.cacheWrite,
		OutputTokens:     c.output,
		CacheReadTokens:  c.cacheRead,
		CacheWriteTokens: c.cacheWrite,
		ReasoningTokens:  c.thinking,
	}
}

// fromStart reads the usage of a message_start event or of a whole Message.
func (c *counts) fromStart(u sdk.Usage) {
	c.input, c.cacheRead, c.cacheWrite, c.output = u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens
	if u.JSON.OutputTokensDetails.Valid() {
		c.thinking = u.OutputTokensDetails.ThinkingTokens
	}
}

// fromDelta reads a message_delta's usage. Its counts are cumulative; the
// output count is always there and final, the others only when they apply.
func (c *counts) fromDelta(u sdk.MessageDeltaUsage) {
	if u.JSON.OutputTokens.Valid() {
		c.output = u.OutputTokens
	}
	if u.JSON.InputTokens.Valid() {
		c.input = u.InputTokens
	}
	if u.JSON.CacheReadInputTokens.Valid() {
		c.cacheRead = u.CacheReadInputTokens
	}
	if u.JSON.CacheCreationInputTokens.Valid() {
		c.cacheWrite = u.CacheCreationInputTokens
	}
	if u.JSON.OutputTokensDetails.Valid() {
		c.thinking = u.OutputTokensDetails.ThinkingTokens
	}
}

// finishReason normalises a stop_reason.
func finishReason(r sdk.StopReason) string {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return "stop"
	case sdk.StopReasonToolUse:
		return "tool_calls"
	case sdk.StopReasonMaxTokens:
		return "length"
	case sdk.StopReasonRefusal:
		return "content_filter"
	default:
		return string(r)
	}
}
