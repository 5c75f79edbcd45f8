package server

import (
	"context"
	"fmt"
	"strconv"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// sessionView is what GET /v1/sessions/{id} answers, before it is
// flattened (v1SessionView).
type sessionView struct {
	Info      store.Info
	Usage     session.Usage
	Placement *session.Placement
	// Children are the sessions made from this one (forks, merges,
	// derivations), for the viewer's comparison picker.
	Children []session.ID
}

// loadView reads what GET /v1/sessions/{id} answers.
func (s *Server) loadView(ctx context.Context, id session.ID) (sessionView, error) {
	ses, info, err := s.loadInfo(ctx, id)
	if err != nil {
		return sessionView{}, err
	}
	children, err := s.storeOf(ctx).Children(ctx, id)
	if err != nil {
		return sessionView{}, err
	}
	v := sessionView{Info: info, Usage: ses.Usage(), Children: children}
	if v.Children == nil {
		v.Children = []session.ID{}
	}
	if p := ses.Placement(); !p.IsZero() {
		v.Placement = &p
	}
	return v, nil
}

// intParam parses an integer query parameter: def when empty, an error
// naming the parameter when it is not an integer in [lo, hi] (hi < 0: no
// upper bound).
func intParam(raw, name string, def, lo, hi int) (int, error) {
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	switch {
	case err != nil:
		return 0, fmt.Errorf("the parameter %s=%q is not an integer", name, raw)
	case n < lo:
		return 0, fmt.Errorf("the parameter %s=%d is below %d", name, n, lo)
	case hi >= 0 && n > hi:
		return 0, fmt.Errorf("the parameter %s=%d is above %d", name, n, hi)
	}
	return n, nil
}
