package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// Route is one way a Selector can send the session.
type Route struct {
	Name        string
	Description string // what the route is for; a choosing model reads it
	Module      Module // nil: the session passes on unchanged
}

// Chooser picks a route by name for s, with a reason.
type Chooser func(ctx context.Context, s *session.Session, routes []Route) (choice, reason string, err error)

// Router sends the session down one of its routes, chosen at run time by a
// Go function or by a model, and records why in a decision chunk (the
// candidates, the choice, the reason and, when a model chose, its
// model_call chunk). The choice may be session.NoRoute ("none") when
// AllowNone is set: the session then passes on unchanged.
type Router struct {
	Name   string
	Routes []Route
	// Choose decides in Go; otherwise Model decides.
	Choose    Chooser
	Model     model.Model
	AllowNone bool
}

// Selector returns a router choosing with choose.
func Selector(name string, choose Chooser, routes ...Route) *Router {
	return &Router{Name: name, Choose: choose, Routes: routes}
}

// ModelSelector returns a router whose choice a model makes.
func ModelSelector(name string, m model.Model, routes ...Route) *Router {
	return &Router{Name: name, Model: m, Routes: routes}
}

// Forward implements Module.
func (r *Router) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	if len(r.Routes) == 0 || (r.Choose == nil && r.Model == nil) {
		return s, fmt.Errorf("%w: selector %s needs routes and a Choose func or a Model", ErrConfig, r.Name)
	}
	node := runctx.Invoke(ctx, "selector:"+r.Name)
	d := session.Decision{Selector: r.Name}
	for _, rt := range r.Routes {
		d.Candidates = append(d.Candidates, session.Candidate{Name: rt.Name, Description: rt.Description})
	}
	var err error
	if r.Choose != nil {
		d.Choice, d.Reason, err = r.Choose(ctx, s, r.Routes)
		if err != nil {
			return s, fmt.Errorf("flow: selector %s: %w", r.Name, err)
		}
	} else if s, err = r.ask(ctx, s, node, &d); err != nil {
		return s, err
	}
	route, ok := r.route(d.Choice)
	if !ok {
		return s, fmt.Errorf("%w: selector %s chose %q, not one of %s", ErrNoRoute, r.Name, d.Choice, r.names())
	}
	if s, err = runctx.Record(ctx, s, node, session.Of(&d)); err != nil {
		return s, err
	}
	if route.Module == nil {
		return s, nil
	}
	return Call(ctx, route.Name, route.Module, s)
}

func (r *Router) route(name string) (Route, bool) {
	if name == session.NoRoute && r.AllowNone {
		return Route{Name: session.NoRoute}, true
	}
	for _, rt := range r.Routes {
		if rt.Name == name {
			return rt, true
		}
	}
	return Route{}, false
}

func (r *Router) names() string {
	var ns []string
	for _, rt := range r.Routes {
		ns = append(ns, rt.Name)
	}
	if r.AllowNone {
		ns = append(ns, session.NoRoute)
	}
	return strings.Join(ns, ", ")
}

// choiceSchema is the JSON answer a choosing model must give.
const choiceSchema = `{"type":"object","properties":{"route":{"type":"string"},"reason":{"type":"string"}},"required":["route","reason"],"additionalProperties":false}`

// ask has the model choose: the conversation so far, then the routes. The
// model_call is recorded (and, under replay, served from the record).
func (r *Router) ask(ctx context.Context, s *session.Session, node string, d *session.Decision) (*session.Session, error) {
	var sb strings.Builder
	sb.WriteString("Choose the route this conversation should take next. Routes:\n")
	for _, rt := range r.Routes {
		fmt.Fprintf(&sb, "- %s: %s\n", rt.Name, rt.Description)
	}
	if r.AllowNone {
		fmt.Fprintf(&sb, "- %s: none of these fits\n", session.NoRoute)
	}
	sb.WriteString(`Answer with JSON: {"route": "<name>", "reason": "<one sentence>"}.`)
	msgs := append(s.Transcript(), session.Message{Role: session.RoleUser, Content: sb.String()})
	req := &model.Request{Messages: msgs, Params: model.Params{ResponseSchema: json.RawMessage(choiceSchema), ResponseSchemaName: "route"}}
	var rec *session.ModelCall
	if p := runctx.PlayerFrom(ctx); p != nil {
		var err error
		if rec, err = p.Model(node, req); err != nil {
			return s, err
		}
	}
	if rec == nil {
		resp, err := model.Generate(ctx, r.Model, req)
		if err != nil {
			return s, fmt.Errorf("flow: selector %s: %w", r.Name, err)
		}
		rec = new(resp.Record(req, r.Model.Name(), false))
	}
	s, err := runctx.Record(ctx, s, node, session.Of(rec))
	if err != nil {
		return s, err
	}
	d.ModelCall = s.Head()
	var ans struct{ Route, Reason string }
	text := strings.TrimSpace(rec.Response.Text)
	text = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```"), "```")
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &ans); err != nil || ans.Route == "" {
		return s, fmt.Errorf("%w: selector %s: the model's choice is not {\"route\", \"reason\"} JSON: %.200q", model.ErrMalformed, r.Name, rec.Response.Text)
	}
	d.Choice, d.Reason = ans.Route, ans.Reason
	return s, nil
}
