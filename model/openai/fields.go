package openai

import (
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/openrath/rath/session"
)

// usage maps OpenAI's counts; prompt_tokens already includes the cached ones,
// as session.Usage.InputTokens does.
func usage(u openai.CompletionUsage) session.Usage {
	return session.Usage{
		InputTokens:      u.PromptTokens,
		OutputTokens:     u.CompletionTokens,
		CacheReadTokens:  u.PromptTokensDetails.CachedTokens,
		CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
		ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
	}
}

// reasoningKeys are where OpenAI-compatible servers put readable reasoning
// (vLLM, DeepSeek, LiteLLM: reasoning_content; OpenRouter, Ollama:
// reasoning). OpenAI itself sends none. The first non-empty one is used,
// so a server sending both is not read twice.
var reasoningKeys = [...]string{"reasoning_content", "reasoning"}

// reasoning is the reasoning text among fields the SDK does not know.
func reasoning(extra map[string]respjson.Field) string {
	for _, k := range reasoningKeys {
		if s, _ := stringField(extra, k); s != "" {
			return s
		}
	}
	return ""
}

// stringField is the string value of extra[key]; ok is false when it is
// absent, null or not a string.
func stringField(extra map[string]respjson.Field, key string) (string, bool) {
	f, ok := extra[key]
	if !ok {
		return "", false
	}
	raw := f.Raw()
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return "", false
	}
	return s, true
}
