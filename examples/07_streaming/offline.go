package streaming

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

// Price is what the offline model charges, in US dollars per million
// tokens.
var Price = model.Price{Input: 1.25, Output: 10}

// The offline model's usage for its two calls.
var (
	FirstUsage  = session.Usage{InputTokens: 187, OutputTokens: 58}
	SecondUsage = session.Usage{InputTokens: 276, OutputTokens: 41}
)

// Offline returns the scripted model, priced: model.New wraps the scripted
// provider so that every call's usage carries its cost.
func Offline() model.Model {
	return model.New(&scripted.Provider{Fn: offline}, "scripted", model.Options{
		Retry: model.RetryPolicy{MaxAttempts: 1},
		Price: &Price,
	})
}

// offline measures both trips, then compares them.
func offline(_ context.Context, req *model.Request) (model.Response, error) {
	var results []string
	for _, m := range req.Messages {
		if m.Role == session.RoleTool {
			results = append(results, m.Content)
		}
	}
	if len(results) < 2 {
		return model.Response{Text: "I'll measure both trips.", Usage: FirstUsage, ToolCalls: []session.ToolCall{
			session.NewToolCall("lisbon-madrid", "distance_km", `{"from":"Lisbon","to":"Madrid"}`),
			session.NewToolCall("paris-berlin", "distance_km", `{"from":"Paris","to":"Berlin"}`),
		}}, nil
	}
	a, b := km(results[0]), km(results[1])
	return model.Response{Usage: SecondUsage, Text: fmt.Sprintf("As the crow flies, Lisbon to Madrid is about %d km "+
		"and Paris to Berlin about %d km, so Paris to Berlin is the longer trip, by roughly %d km.", a, b, b-a)}, nil
}

// km reads the number of kilometres from a distance_km result.
func km(result string) int {
	_, after, _ := strings.Cut(result, ": ")
	n, _ := strconv.Atoi(strings.TrimSuffix(after, " km"))
	return n
}
