package memory

import (
	"context"
	"fmt"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// Name is the workflow's registered name.
const Name = "memory"

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: Name,
		Description: "memory with provenance: remember with evidence, recall in a new run, Explain why, roll back with DerivedFrom",
		Build:       build})
}

// The conversation run 1 starts from: an answer, and the user's correction.
const (
	asked      = "How do I build the release binary of rath?"
	answered   = "Run `go build -o bin/rath ./cmd/rath`."
	correction = "That fails on the release image: it has no C compiler. Release builds need CGO_ENABLED=0."
)

// question is what runs 2 and 3 are asked, each in a new conversation.
const question = "Write the CI step that builds the release binary of rath."

// Path is where the rule is remembered within the run's project scope.
const Path = "build/release"

// build returns the demo and run 1's conversation.
func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	mem, err := rt.Memory(ctx)
	if err != nil {
		return nil, nil, err
	}
	bm, err := exmodel.Pick(ctx, scripted.Func(builder))
	if err != nil {
		return nil, nil, err
	}
	hm, err := exmodel.Pick(ctx, scripted.Func(helper))
	if err != nil {
		return nil, nil, err
	}
	tb, err := tryBuild()
	if err != nil {
		return nil, nil, err
	}
	d := &demo{builderModel: bm, helperModel: hm, tool: tb, mem: mem, store: rt.Store, pool: rt.Sandboxes}
	return d, session.FromUser(asked).Append(session.Assistant(answered), session.User(correction)), nil
}

// Scope is the memory scope a run works in: a project scope named after its
// input's first chunk, so that each run of the example starts clean (and a
// replay, which sees the same chunk, finds the same scope).
func Scope(in *session.Session) string {
	return memory.ScopeProject + "/run-" + in.Chunk(0).ID.Short()
}

// agents returns the builder and the helper, recalling from scope.
func (d *demo) agents(scope string) (builder, helper *agent.Agent, err error) {
	builder, err = agent.New(agent.Config{
		Name: "builder",
		Instructions: "You prepare release builds of rath. Before you rely on a claim about the build, check it with try_build. " +
			"When the user corrects you, check the correction and restate the resulting rule in one sentence.",
		Model: d.builderModel, Tools: []tool.Tool{d.tool},
		Memory: d.mem, MemoryScopes: []string{scope}, CommitOnForward: true,
		Store: d.store, Sandboxes: d.pool,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("memory example: %w", err)
	}
	helper, err = agent.New(agent.Config{
		Name:         "helper",
		Instructions: "You write CI configuration for rath. Use what is recalled from memory, and say where each requirement comes from.",
		Model:        d.helperModel,
		Memory:       d.mem, MemoryScopes: []string{scope}, CommitOnForward: true,
		Store: d.store, Sandboxes: d.pool,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("memory example: %w", err)
	}
	return builder, helper, nil
}
