package providers

import (
	"context"
	"fmt"
	"os"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// Name is the workflow's registered name.
const Name = "providers"

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: Name,
		Description: "the same agent on two models in parallel branches, merged, with usage and cost compared in a note",
		Build:       build})
}

// question is the one input both branches answer.
const question = "We serve 1,200 checkout requests/s today and expect 5,000/s on launch day. " +
	"One pod handles 400 requests/s. How many pods do we need with 30% headroom?"

// contender is one branch: its name (its node-path segment) and its model.
type contender struct {
	name  string
	model model.Model
}

// contenders are the two models to compare: scripted offline; openai and
// anthropic when both keys are set; otherwise, with one key, that
// provider's model twice.
func contenders(ctx context.Context) ([]contender, error) {
	fast, careful := offline()
	if exmodel.Live() != "" && os.Getenv("OPENAI_API_KEY") != "" && os.Getenv("ANTHROPIC_API_KEY") != "" {
		var out []contender
		for _, name := range []string{"openai:gpt-5-mini", "anthropic:claude-haiku-4-5"} {
			m, err := model.Open(ctx, name, model.OpenOptions{})
			if err != nil {
				return nil, err
			}
			out = append(out, contender{m.Provider(), m})
		}
		return out, nil
	}
	f, err := exmodel.Pick(ctx, fast)
	if err != nil {
		return nil, err
	}
	c, err := exmodel.Pick(ctx, careful)
	if err != nil {
		return nil, err
	}
	if exmodel.Live() != "" {
		return []contender{{"first", f}, {"second", c}}, nil
	}
	return []contender{{"fast", f}, {"careful", c}}, nil
}

// build returns race (the same agent on each model, in parallel) ->
// compare, and the question.
func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	cs, err := contenders(ctx)
	if err != nil {
		return nil, nil, err
	}
	pods, err := podsNeeded()
	if err != nil {
		return nil, nil, err
	}
	race := &flow.Par{}
	for _, c := range cs {
		// One agent configuration; only the model differs.
		a, err := agent.New(agent.Config{
			Name: "planner",
			Instructions: "You are a capacity planner. Answer with the number of pods first, then one or two sentences of reasoning. " +
				"Use pods_needed when you want the arithmetic exact.",
			Model: c.model, Tools: []tool.Tool{pods}, MaxSteps: 4,
			Store: rt.Store, Sandboxes: rt.Sandboxes,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("providers: %w", err)
		}
		race.Branches = append(race.Branches, flow.Named(c.name, a))
	}
	wf := flow.Sequential(flow.Named("race", race), flow.Named("compare", flow.Func(compare)))
	return wf, session.FromUser(question), nil
}
