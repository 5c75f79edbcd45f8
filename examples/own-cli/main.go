// Command own-cli is a program of its own with the whole rath command line
// over its workflows: it registers one workflow, "count-words", and calls
// cli.Main. Build it and run it like rath:
//
//	go build -o own-cli ./examples/own-cli
//	./own-cli run                                  # lists its workflows
//	./own-cli run count-words --input "the quick brown fox"
//	./own-cli run count-words --input "the quick brown fox" --arg min-length=4
//	./own-cli ls
//	./own-cli show <the printed id>
//	./own-cli replay <the printed id>
//
// The agent counts words with a Go tool (tool.Func); its model is
// scripted, so the program runs offline. Swap in a real model.Model and
// nothing else changes.
package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/cli"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

func main() {
	rath.RegisterWorkflow(rath.Workflow{
		Name:        "count-words",
		Description: "an agent counts the words of its input with a Go tool",
		TakesInput:  true,
		Params: []rath.Param{{Name: "min-length", Default: "1",
			Description: "count only the words of at least this many letters"}},
		Build: build,
	})
	cli.Main(cli.Name("own-cli", "count words, durably"))
}

// countArgs is the tool's input; its schema is derived from the struct.
type countArgs struct {
	Text string `json:"text" jsonschema:"the text whose words to count"`
}

// countWords is the Go tool the agent calls: it counts the words of at
// least that many letters.
func countWords(least int) func(context.Context, countArgs) (int, error) {
	return func(_ context.Context, in countArgs) (int, error) {
		n := 0
		for _, w := range strings.Fields(in.Text) {
			if utf8.RuneCountInString(w) >= least {
				n++
			}
		}
		return n, nil
	}
}

// build makes the run: an agent with the tool, on the input text (or a
// sentence of its own when the run has none), counting the words of at
// least min-length letters.
func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	text, ok := rath.InputText(ctx)
	if !ok {
		text = "a run without input counts these words"
	}
	least, err := strconv.Atoi(rath.Arg(ctx, "min-length"))
	if err != nil || least < 1 {
		return nil, nil, fmt.Errorf("%w: count-words: min-length %q is not a whole number above 0", rath.ErrBadInput, rath.Arg(ctx, "min-length"))
	}
	counter, err := tool.Func("count_words", "Count the words of a text.", countWords(least))
	if err != nil {
		return nil, nil, err
	}
	a, err := agent.New(agent.Config{
		Name:         "counter",
		Instructions: "You count words with the count_words tool.",
		Model:        scripted.Func(offline),
		Tools:        []tool.Tool{counter},
		Store:        rt.Store,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("count-words: %w", err)
	}
	return a, session.FromUser(text), nil
}

// offline is the scripted model: it asks the tool to count the user's
// text, then answers with the tool's result.
func offline(_ context.Context, req *model.Request) (model.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == session.RoleTool {
		return model.Response{Text: "The text has " + last.Content + " words.",
			Usage: session.Usage{InputTokens: 30, OutputTokens: 8}}, nil
	}
	args := fmt.Sprintf(`{"text":%q}`, last.Content)
	return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c1", "count_words", args)},
		Usage: session.Usage{InputTokens: 20, OutputTokens: 12}}, nil
}
