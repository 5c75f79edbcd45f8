// Package anthropic is the model.Provider for Anthropic's Messages API,
// built on the official Go SDK.
//
// A Provider performs exactly one HTTP attempt per call; the SDK's own
// retries are disabled so that model.New retries and records every attempt.
// Requests are built from the session transcript: system messages become the
// system prompt, tool calls and results become tool_use and tool_result
// blocks (consecutive results grouped in one user turn), and signed thinking
// blocks are sent back ahead of the text and tool calls they preceded.
// Streamed events, or the blocks of a non-streaming answer, are fed through
// a model.Assembler, so both paths report the same events.
//
// Importing the package registers the provider as "anthropic".
package anthropic
