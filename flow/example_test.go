package flow_test

import (
	"context"
	"fmt"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

// reply returns an agent whose scripted model answers once with text.
func reply(name, text string) *agent.Agent {
	a, err := agent.New(agent.Config{
		Name:         name,
		Instructions: "You are the " + name + ".",
		Model:        scripted.New(model.Response{Text: text}),
	})
	if err != nil {
		panic(err)
	}
	return a
}

// A workflow is a tree of modules. Sequential runs its children one after
// the other on the growing session; Parallel runs each branch on its own
// fork of the input and merges the outputs. Every chunk records the node
// path of the module that produced it.
func Example() {
	wf := flow.Sequential(
		flow.Named("plan", reply("planner", "Check the lexer and the parser.")),
		flow.Named("review", flow.Parallel(
			flow.Named("lexer", reply("lexer", "The lexer drops the last token.")),
			flow.Named("parser", reply("parser", "The parser is fine.")),
		)),
	)
	fmt.Print(flow.Describe(wf))

	out, err := wf.Forward(context.Background(), session.FromUser("Why does TestParse fail?"))
	if err != nil {
		panic(err)
	}
	for _, c := range out.All() {
		if c.Kind == session.KindAssistant {
			fmt.Println(c.Node, c.Text())
		}
	}
	fmt.Println(out.Len(), out.Verify() == nil)
	// Output:
	// root (sequential)
	//   plan (agent) model=scripted:scripted
	//   review (parallel)
	//     lexer (agent) model=scripted:scripted
	//     parser (agent) model=scripted:scripted
	// plan/agent:planner#1 Check the lexer and the parser.
	// review/lexer/agent:lexer#1 The lexer drops the last token.
	// review/parser/agent:parser#1 The parser is fine.
	// 10 true
}
