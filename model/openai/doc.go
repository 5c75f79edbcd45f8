// Package openai is the model.Provider for OpenAI's Chat Completions API and
// the servers that speak it (vLLM, Ollama, LiteLLM, OpenRouter and others),
// built on the official openai-go SDK.
//
// It registers itself as "openai": open "openai:gpt-5.5" through model.Open,
// with OPENAI_API_KEY and, for another server, OPENAI_BASE_URL. A custom
// base URL may go without a key (local servers); the default one may not.
//
// Each Attempt makes exactly one HTTP request (the SDK's own retries are off:
// model.New retries and records every attempt). Streamed chunks and whole
// answers go through the same model.Assembler, so both yield the same
// events. Reasoning text that compatible servers send as reasoning_content
// or reasoning is read too. A stream that stops before a finish_reason or
// [DONE] is an error, never a short answer.
package openai
