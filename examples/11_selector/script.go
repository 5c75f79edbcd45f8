package selector

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

// offline returns the scripted models: a triage model that reads the ticket
// and the routes it is shown, and one fixed answer per agent.
func offline() Models {
	return Models{
		Triage: scripted.Func(triage),
		Engineer: answer("Likely cause: 2.3.0 changed the permission check on the report export endpoint, and the admin role lost the export permission " +
			"(regular users kept it). To reproduce: on 2.3.0, sign in as an admin, open Reports and click Export: 403. " +
			"Workaround until the fix: a regular user can run the export."),
		Billing: answer("I have passed this to billing with the ticket attached; expect an answer within one business day."),
		Docs:    answer("The steps are in the product guide under the feature's name; reply if what you see differs from them."),
		Escalation: answer("P1: Reports > Export returns 403 for every admin since the 2.3.0 upgrade (regular users unaffected); " +
			"the customer needs the exports for its month-end close on Friday."),
	}
}

// signals send a ticket down a route when it contains one of their words.
var signals = []struct{ route, words, reason string }{
	{"bug", "error|403|denied|crash|broke|fails|regression", "a defect report (something stopped working), not a billing or how-to question"},
	{"billing", "invoice|refund|charged|charge|plan|subscription", "about money or the plan, not a defect or a how-to question"},
}

// triage chooses a route from the routes it is shown, as the JSON the
// selector asks for.
func triage(_ context.Context, req *model.Request) (model.Response, error) {
	offered := req.Messages[len(req.Messages)-1].Content // the selector's question, listing the routes
	ticket := ""
	for _, m := range req.Messages {
		if m.Role == session.RoleUser {
			ticket = strings.ToLower(m.Content)
			break
		}
	}
	choice := map[string]string{"route": "how-to", "reason": "the ticket asks how to use a feature; nothing in it is broken or about billing"}
	for _, sig := range signals {
		if !strings.Contains(offered, "- "+sig.route+":") {
			continue
		}
		for _, w := range strings.Split(sig.words, "|") {
			if strings.Contains(ticket, w) {
				choice = map[string]string{"route": sig.route, "reason": "the ticket says \"" + w + "\": " + sig.reason}
				break
			}
		}
		if choice["route"] == sig.route {
			break
		}
	}
	b, err := json.Marshal(choice)
	if err != nil {
		return model.Response{}, err
	}
	return respond(req, string(b)), nil
}

// answer is a model that always gives text.
func answer(text string) model.Model {
	return scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
		return respond(req, text), nil
	})
}

// respond is a scripted answer with plausible usage: about four bytes a
// token.
func respond(req *model.Request, text string) model.Response {
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
	}
	return model.Response{Text: text, Usage: session.Usage{InputTokens: int64(in+3) / 4, OutputTokens: int64(len(text)+3) / 4}}
}
