package selector

import (
	"context"

	"github.com/openrath/rath"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// Name is the workflow's registered name.
const Name = "selector"

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: Name,
		Description: "a support ticket routed by a ModelSelector (bug, billing, how-to) and a Go Selector (urgent or not), each decision recorded",
		Build:       build})
}

// Ticket is the support ticket the run triages.
const Ticket = "Since this morning's upgrade to 2.3.0, every admin in our workspace gets \"permission denied (403)\" " +
	"when they click Export on the Reports page. Regular users can still export. " +
	"We need those exports for our month-end close on Friday."

// build picks each model (live with a key, else the scripted one) and
// returns the workflow and the ticket.
func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	ms := offline()
	for _, m := range []*model.Model{&ms.Triage, &ms.Engineer, &ms.Billing, &ms.Docs, &ms.Escalation} {
		picked, err := exmodel.Pick(ctx, *m)
		if err != nil {
			return nil, nil, err
		}
		*m = picked
	}
	wf, err := Workflow(ms, rt.Store, rt.Sandboxes)
	if err != nil {
		return nil, nil, err
	}
	return wf, session.FromUser(Ticket), nil
}
