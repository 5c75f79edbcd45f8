package selector_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/session"

	"github.com/openrath/rath/examples/11_selector"
)

func TestSelector(t *testing.T) {
	ctx := context.Background()
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	out, err := rt.Run(ctx, selector.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}

	ds := decisions(out)
	if len(ds) != 2 {
		t.Fatalf("%d decisions", len(ds))
	}
	// The model's decision: every candidate with its description, the
	// choice, the reason, and the model call that made it.
	tr := ds[0]
	if tr.node != "triage/selector:triage#1" || tr.d.Selector != "triage" || tr.d.Choice != "bug" || !strings.Contains(tr.d.Reason, `"403"`) {
		t.Fatalf("triage decision %+v at %s", tr.d, tr.node)
	}
	if names(tr.d.Candidates) != "bug,billing,how-to" || !strings.Contains(tr.d.Candidates[0].Description, "regressions") {
		t.Fatalf("triage candidates %+v", tr.d.Candidates)
	}
	mc := chunk(out, tr.d.ModelCall)
	if mc == nil || mc.ModelCall == nil || mc.Node != tr.node || !strings.Contains(mc.ModelCall.Response.Text, `"route":"bug"`) {
		t.Fatalf("the triage decision's model call: %+v", mc)
	}
	// The Go decision: no model call, a reason from the ticket's signals.
	pr := ds[1]
	if pr.node != "priority/selector:priority#1" || pr.d.Choice != "urgent" || pr.d.ModelCall != "" ||
		!strings.Contains(pr.d.Reason, "friday") || !strings.Contains(pr.d.Reason, "every") || names(pr.d.Candidates) != "urgent,normal" {
		t.Fatalf("priority decision %+v at %s", pr.d, pr.node)
	}
	// The routes taken, and only those, ran.
	answers := map[string]string{}
	for _, c := range out.All() {
		if c.Assistant != nil {
			answers[c.Node] = c.Assistant.Text
		}
	}
	if len(answers) != 2 || !strings.Contains(answers["triage/bug/agent:engineer#1"], "403") || !strings.HasPrefix(answers["priority/urgent/agent:escalation#1"], "P1:") {
		t.Fatalf("answers %v", answers)
	}

	// Deterministic: the runtime's replay repeats the head...
	again, err := rt.Replay(ctx, out.ID())
	if err != nil || again.Head() != out.Head() {
		t.Fatalf("replay: %v", err)
	}
	// ...and it serves the triage decision from the record: models that
	// fail if called are never called.
	var calls atomic.Int64
	refuse := scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
		calls.Add(1)
		return model.Response{}, errors.New("a replay called the model")
	})
	wf, err := selector.Workflow(selector.Models{Triage: refuse, Engineer: refuse, Billing: refuse, Docs: refuse, Escalation: refuse}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := rt.Store.Load(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	again, err = replay.Run(ctx, wf, rec)
	if err != nil || again.Head() != out.Head() || calls.Load() != 0 {
		t.Fatalf("replay with refusing models: %v, %d calls", err, calls.Load())
	}
}

// TestOtherRoutes: a billing question without a deadline goes to billing
// and stays in the normal queue, where nothing more runs.
func TestOtherRoutes(t *testing.T) {
	ctx := context.Background()
	say := func(text string) model.Model { return scripted.New(model.Response{Text: text}) }
	wf, err := selector.Workflow(selector.Models{
		Triage:  say(`{"route":"billing","reason":"it is about an invoice"}`),
		Billing: say("I will correct the invoice address and send a new invoice."),
		// The routes not taken: models with no answers.
		Engineer: scripted.New(), Docs: scripted.New(), Escalation: scripted.New(),
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := flow.Run(ctx, nil, wf, session.FromUser("Please change the address on my invoices."))
	if err != nil {
		t.Fatal(err)
	}
	ds := decisions(out)
	if len(ds) != 2 || ds[0].d.Choice != "billing" || ds[1].d.Choice != "normal" || !strings.Contains(ds[1].d.Reason, "deadline words: 0") {
		t.Fatalf("decisions %+v", ds)
	}
	if last, _ := out.Last(); last.Decision == nil {
		t.Fatalf("the normal route appended %+v", last)
	}
}

type decided struct {
	node string
	d    *session.Decision
}

func decisions(s *session.Session) []decided {
	var out []decided
	for _, c := range s.All() {
		if c.Decision != nil {
			out = append(out, decided{c.Node, c.Decision})
		}
	}
	return out
}

func names(cs []session.Candidate) string {
	var ns []string
	for _, c := range cs {
		ns = append(ns, c.Name)
	}
	return strings.Join(ns, ",")
}

func chunk(s *session.Session, id session.ChunkID) *session.Chunk {
	for _, c := range s.All() {
		if c.ID == id {
			return &c
		}
	}
	return nil
}
