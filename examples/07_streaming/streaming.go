package streaming

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// Out receives the run as it streams.
var Out io.Writer = os.Stderr

// Task is the user's question.
const Task = "How far is it from Lisbon to Madrid, and from Paris to Berlin, as the crow flies? Which trip is longer?"

const instructions = "You answer travel questions. Use distance_km for every distance; do not guess."

func init() {
	rath.RegisterWorkflow(rath.Workflow{
		Name:        "streaming",
		Description: "consume an agent's events as they happen (text deltas, tool calls, usage, commits) and sum up usage and cost",
		Build:       build,
	})
}

func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	m, err := exmodel.Pick(ctx, Offline())
	if err != nil {
		return nil, nil, fmt.Errorf("streaming: model: %w", err)
	}
	navigator, err := agent.New(agent.Config{
		Name:         "navigator",
		Instructions: instructions,
		Model:        m,
		Tools:        []tool.Tool{Distance()},
		MaxSteps:     6,
		Store:        rt.Store,
		Sandboxes:    rt.Sandboxes,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("streaming: %w", err)
	}
	return flow.Func(func(ctx context.Context, s *session.Session) (*session.Session, error) {
		return stream(ctx, navigator, s)
	}), session.FromUser(Task), nil
}

// step is what one model call did.
type step struct {
	usage session.Usage
	calls []string
}

// stream runs a, writing its events to Out as they come, and records a
// summary of its steps.
func stream(ctx context.Context, a *agent.Agent, in *session.Session) (*session.Session, error) {
	var (
		out     *session.Session
		steps   []step
		commits int
	)
	for ev, err := range a.Run(ctx, in) {
		if ev.Session != nil {
			out = ev.Session
		}
		if err != nil {
			fmt.Fprintf(Out, "\n[failed: %v]\n", err)
			if out == nil {
				out = in
			}
			return out, err
		}
		switch ev.Kind {
		case agent.StepStart:
			steps = append(steps, step{})
			fmt.Fprintf(Out, "[step %d]\n", ev.Step)
		case agent.TextDelta, agent.ReasoningDelta:
			fmt.Fprint(Out, ev.Delta)
		case agent.Usage:
			steps[len(steps)-1].usage = *ev.Usage
			fmt.Fprintf(Out, "\n[usage %s]\n", ev.Usage)
		case agent.ToolCallStart:
			steps[len(steps)-1].calls = append(steps[len(steps)-1].calls, ev.Call.Name)
			fmt.Fprintf(Out, "[call %s %s]\n", ev.Call.Name, ev.Call.ArgsString())
		case agent.ToolCallEnd:
			fmt.Fprintf(Out, "[result %s: %s]\n", ev.Result.Tool, ev.Result.ModelContent())
		case agent.Committed:
			commits++
			fmt.Fprintf(Out, "[committed: %d chunks]\n", ev.Session.Len())
		case agent.Done:
			fmt.Fprintln(Out, "[done]")
		}
	}
	return runctx.Record(ctx, out, runctx.Invoke(ctx, "streaming:summary"), session.Note(summary(steps, commits, out.Usage())))
}

// summary describes the steps: usage, cost and calls of each, and the
// totals.
func summary(steps []step, commits int, total session.Usage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Streamed %d model calls.", len(steps))
	for i, s := range steps {
		did := "answered"
		if len(s.calls) > 0 {
			did = "called " + strings.Join(s.calls, ", ")
		}
		fmt.Fprintf(&b, "\nstep %d: %s; %s", i+1, usageLine(s.usage), did)
	}
	fmt.Fprintf(&b, "\ntotal: %s", usageLine(total))
	return b.String()
}

func usageLine(u session.Usage) string {
	return fmt.Sprintf("%d input + %d output tokens, $%.6f", u.InputTokens, u.OutputTokens, u.CostUSD)
}
