// Package exmodel picks the model an example runs with: a live provider
// when an API key is in the environment, else the example's own scripted
// model, so that every example runs offline by default.
package exmodel

import (
	"context"
	"os"

	"github.com/openrath/rath/model"
	_ "github.com/openrath/rath/model/anthropic" // provider "anthropic"
	_ "github.com/openrath/rath/model/openai"    // provider "openai"
	"github.com/openrath/rath/session"
)

// Live reports which provider a live run would use ("" when offline):
// openai when OPENAI_API_KEY is set, else anthropic when
// ANTHROPIC_API_KEY is; RATH_OFFLINE=1 forces offline.
func Live() string {
	switch {
	case os.Getenv("RATH_OFFLINE") == "1":
		return ""
	case os.Getenv("OPENAI_API_KEY") != "":
		return "openai"
	case os.Getenv("ANTHROPIC_API_KEY") != "":
		return "anthropic"
	}
	return ""
}

// liveModel is the model a live run uses per provider, overridable with
// RATH_EXAMPLE_MODEL ("provider:model").
var liveModel = map[string]string{"openai": "openai:gpt-5-mini", "anthropic": "anthropic:claude-haiku-4-5"}

// Pick returns a live model when Live says so, else offline.
func Pick(ctx context.Context, offline model.Model) (model.Model, error) {
	p := Live()
	if p == "" {
		return offline, nil
	}
	name := os.Getenv("RATH_EXAMPLE_MODEL")
	if name == "" {
		name = liveModel[p]
	}
	return model.Open(ctx, name, model.OpenOptions{})
}

// Respond is a scripted answer named as modelName, with a plausible token
// count: about four characters a token, in (messages and their tool-call
// arguments) and out (text and call arguments).
func Respond(req *model.Request, modelName, text string, calls ...session.ToolCall) model.Response {
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
		for _, c := range m.ToolCalls {
			in += len(c.Args)
		}
	}
	out := len(text)
	for _, c := range calls {
		out += len(c.Args)
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	return model.Response{Text: text, ToolCalls: calls, FinishReason: finish, Model: modelName,
		Usage: session.Usage{InputTokens: int64(in/4 + 1), OutputTokens: int64(out/4 + 1)}}
}
