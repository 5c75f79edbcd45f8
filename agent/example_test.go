package agent_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// WordCount is the tool's input; its JSON schema is inferred from the type.
type WordCount struct {
	Text string `json:"text" jsonschema:"the text to count the words of"`
}

// An agent with one Go tool, driven by a scripted model: the model asks for
// the tool, the agent runs it and records the call and its result, and the
// model answers. The output session holds every step as evidence.
func Example() {
	count, err := tool.Func("count_words", "Count the words of a text.",
		func(_ context.Context, in WordCount) (int, error) {
			return len(strings.Fields(in.Text)), nil
		})
	if err != nil {
		panic(err)
	}
	m := scripted.New(
		model.Response{ToolCalls: []session.ToolCall{
			session.NewToolCall("call_1", "count_words", `{"text":"the quick brown fox"}`),
		}},
		model.Response{Text: "The text has 4 words."},
	)
	a, err := agent.New(agent.Config{
		Name:         "counter",
		Instructions: "Count words with the count_words tool.",
		Model:        m,
		Tools:        []tool.Tool{count},
	})
	if err != nil {
		panic(err)
	}

	out, err := a.Forward(context.Background(), session.FromUser("How many words in 'the quick brown fox'?"))
	if err != nil {
		panic(err)
	}
	for _, c := range out.All() {
		switch c.Kind {
		case session.KindModelCall:
			fmt.Printf("%s provider=%s\n", c.Kind, c.ModelCall.Provider)
		case session.KindToolResult:
			fmt.Printf("%s %s(%s) = %s\n", c.Kind, c.ToolResult.Tool, c.ToolResult.Args, c.ToolResult.Content)
		default:
			fmt.Printf("%s %q\n", c.Kind, c.Text())
		}
	}
	fmt.Println(out.Lineage().Op, out.Verify() == nil)
	// Output:
	// user "How many words in 'the quick brown fox'?"
	// system "Count words with the count_words tool."
	// model_call provider=scripted
	// assistant ""
	// tool_result count_words({"text":"the quick brown fox"}) = 4
	// model_call provider=scripted
	// assistant "The text has 4 words."
	// agent:counter true
}
