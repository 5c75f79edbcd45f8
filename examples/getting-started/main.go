// Command getting-started is the program of docs/getting-started.md: an
// agent with a Go tool, run durably on the embedded store, forked, and
// replayed. It runs offline on a scripted model; -model names a real one.
//
//	go run ./examples/getting-started                      # offline
//	go run ./examples/getting-started -model openai:gpt-5.5 # with OPENAI_API_KEY
//
// Its state goes to ./.rath (or $RATH_HOME), where `rath serve` finds it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	_ "github.com/openrath/rath/model/anthropic" // registers "anthropic:..."
	_ "github.com/openrath/rath/model/openai"    // registers "openai:..."
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

var modelName = flag.String("model", "", `a real model, such as "openai:gpt-5.5" (default: scripted, offline)`)

// countArgs is the input of the count_words tool. The JSON schema the
// model sees is derived from this struct and its tags.
type countArgs struct {
	Text string `json:"text" jsonschema:"the text whose words to count"`
}

// countWords is the tool's behaviour: plain Go.
func countWords(_ context.Context, in countArgs) (int, error) {
	return len(strings.Fields(in.Text)), nil
}

// newAgent returns the agent: instructions, a model and the one tool.
// With a store, every step is committed before the next one starts.
func newAgent(rt *rath.Runtime, m model.Model) (*agent.Agent, error) {
	count, err := tool.Func("count_words", "Count the words of a text.", countWords)
	if err != nil {
		return nil, err
	}
	return agent.New(agent.Config{
		Name:         "counter",
		Instructions: "Count words with the count_words tool; never count by hand.",
		Model:        m,
		Tools:        []tool.Tool{count},
		Store:        rt.Store,
		Sandboxes:    rt.Sandboxes,
	})
}

// openModel opens the model named by -model, or else a scripted model
// that gives the answers in script, in order.
func openModel(ctx context.Context, script ...model.Response) (model.Model, error) {
	if *modelName != "" {
		return model.Open(ctx, *modelName, model.OpenOptions{})
	}
	return scripted.New(script...), nil
}

// countCall is a scripted model's answer that calls count_words on text.
func countCall(text string) model.Response {
	args := fmt.Sprintf(`{"text":%q}`, text)
	return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("call_1", "count_words", args)}}
}

func init() {
	rath.RegisterWorkflow(rath.Workflow{
		Name:        "count-words",
		Description: "an agent counts the words of a sentence with a Go tool",
		Build: func(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
			m, err := openModel(ctx, countCall("the quick brown fox"), model.Response{Text: "It has 4 words."})
			if err != nil {
				return nil, nil, err
			}
			a, err := newAgent(rt, m)
			if err != nil {
				return nil, nil, err
			}
			return a, session.FromUser("How many words are in 'the quick brown fox'?"), nil
		},
	})
}

func main() {
	flag.Parse()
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "getting-started:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	// The runtime: a SQLite store in ./.rath (or $RATH_HOME).
	rt, err := rath.Open(ctx, rath.Config{})
	if err != nil {
		return err
	}
	defer rt.Close()

	// A durable run: the input and every step are committed.
	out, err := rt.Run(ctx, "count-words")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "run:    %s  %q (%d chunks)\n", out.ID(), answer(out), out.Len())

	// A fork: a new session that shares the run's chunks and asks more.
	fork := out.Fork().Append(session.User("And in 'to be or not to be'?"))
	m, err := openModel(ctx, countCall("to be or not to be"), model.Response{Text: "It has 6 words."})
	if err != nil {
		return err
	}
	a, err := newAgent(rt, m)
	if err != nil {
		return err
	}
	more, err := flow.Run(ctx, rt.Store, a, fork)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "fork:   %s  of %s\n", fork.ID(), fork.Lineage().Parents[0])
	fmt.Fprintf(w, "        %s  %q (%d chunks)\n", more.ID(), answer(more), more.Len())

	// A replay: the run re-executed from its record, without the model.
	if _, err := rt.Replay(ctx, out.ID()); err != nil {
		return err
	}
	fmt.Fprintf(w, "replay: %s  identical\n", out.ID())
	return nil
}

// answer is the text of the session's last assistant chunk.
func answer(s *session.Session) string {
	for i := s.Len() - 1; i >= 0; i-- {
		if c := s.Chunk(i); c.Kind == session.KindAssistant {
			return c.Text()
		}
	}
	return ""
}
