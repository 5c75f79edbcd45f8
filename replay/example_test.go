package replay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

type Passage struct {
	Text string `json:"text"`
}

// wordCounter builds the same agent around a given word-counting function and
// model, as a program would after a code change.
func wordCounter(m model.Model, count func(string) int) *agent.Agent {
	t := tool.MustFunc("count_words", "Count the words of a text.",
		func(_ context.Context, in Passage) (int, error) { return count(in.Text), nil })
	a, err := agent.New(agent.Config{
		Name:         "counter",
		Instructions: "Count words with the count_words tool.",
		Model:        m,
		Tools:        []tool.Tool{t},
	})
	if err != nil {
		panic(err)
	}
	return a
}

// A recorded run is replayed twice: with the same code it repeats the
// record chunk for chunk without calling the model; with a changed tool,
// re-run rather than served from the record, it stops at the first
// difference and reports it as a *replay.Divergence.
func ExampleRun() {
	ctx := context.Background()
	words := func(s string) int { return len(strings.Fields(s)) }

	live := scripted.New(
		model.Response{ToolCalls: []session.ToolCall{
			session.NewToolCall("call_1", "count_words", `{"text":"to be or not to be"}`),
		}},
		model.Response{Text: "Six words."},
	)
	// flow.Run runs the agent as one workflow run; with a store it would
	// also commit the input and every step.
	in := session.FromUser("How many words in Hamlet's question?")
	recorded, err := flow.Run(ctx, nil, wordCounter(live, words), in)
	if err != nil {
		panic(err)
	}

	// The same code. The model has no answers left: everything is served
	// from the record.
	same, err := replay.Run(ctx, wordCounter(scripted.New(), words), recorded)
	fmt.Println(err, same.Head() == recorded.Head())

	// Changed code: the tool now counts distinct words.
	distinct := func(s string) int {
		seen := map[string]bool{}
		for _, w := range strings.Fields(s) {
			seen[w] = true
		}
		return len(seen)
	}
	_, err = replay.Run(ctx, wordCounter(scripted.New(), distinct), recorded, replay.RerunTools())
	var d *replay.Divergence
	if errors.As(err, &d) {
		fmt.Println("diverged at", d.Node, "chunk", d.Index)
		fmt.Println(d.What)
	}
	// Output:
	// <nil> true
	// diverged at agent:counter#1 chunk 4
	// a tool_result chunk differs from the recorded tool_result
}
