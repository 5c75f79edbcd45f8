package lineage

import (
	"context"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// The offline model's answers.
const (
	inProcessAnswer = "Cache the parsed config in process memory and reload it when the file's modification time changes. " +
		"It costs nothing to run and adds no moving parts; each replica may serve a stale copy for at most one check interval."
	redisAnswer = "Keep the parsed config in Redis under one key with a short TTL, read through by every replica. " +
		"All replicas agree within the TTL, at the price of a network hop per miss and one more service to operate."
	reviewAnswer = "Take the in-process cache: the config changes a few times a day, so a copy a few seconds stale is harmless and nothing new has to run. " +
		"Revisit Redis only if replicas must agree at once."
)

// offline answers as the proposer (after the prompt of its branch) or as
// the reviewer, told apart by the instructions the agent sends first.
func offline(_ context.Context, req *model.Request) (model.Response, error) {
	if len(req.Messages) > 0 && req.Messages[0].Content == reviewerInstructions {
		return model.Response{Text: reviewAnswer, Usage: session.Usage{InputTokens: 236, OutputTokens: 48}}, nil
	}
	last := ""
	for _, m := range req.Messages {
		if m.Role == session.RoleUser {
			last = m.Content
		}
	}
	answer := inProcessAnswer
	if strings.Contains(last, "Redis") {
		answer = redisAnswer
	}
	return model.Response{Text: answer, Usage: session.Usage{InputTokens: 58, OutputTokens: 47}}, nil
}
