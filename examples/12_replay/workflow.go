package replay

import (
	"context"

	"github.com/openrath/rath"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

// Name is the workflow's registered name.
const Name = "replay"

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: Name,
		Description: "a run replayed identically, replayed against changed code (a Divergence), and forked at a step with a changed prompt",
		Build:       build})
}

func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	cm, err := exmodel.Pick(ctx, scripted.Func(calculate))
	if err != nil {
		return nil, nil, err
	}
	wm, err := exmodel.Pick(ctx, scripted.Func(write))
	if err != nil {
		return nil, nil, err
	}
	return &demo{calc: cm, write: wm, st: rt.Store, pool: rt.Sandboxes}, session.FromUser(Question), nil
}
