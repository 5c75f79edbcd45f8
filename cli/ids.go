package cli

import (
	"context"
	"strconv"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
)

// sessionID checks a session id argument.
func sessionID(arg string) (session.ID, error) {
	id := session.ID(arg)
	if err := id.Validate(); err != nil {
		return "", usageErr("%q is not a session id", arg)
	}
	return id, nil
}

// withID checks a session id argument and opens the runtime.
func (a *app) withID(ctx context.Context, arg string) (session.ID, *rath.Runtime, error) {
	id, err := sessionID(arg)
	if err != nil {
		return "", nil, err
	}
	rt, err := a.runtime(ctx)
	return id, rt, err
}

// load opens the runtime and loads a session by id argument.
func (a *app) load(ctx context.Context, arg string) (*session.Session, error) {
	id, rt, err := a.withID(ctx, arg)
	if err != nil {
		return nil, err
	}
	return rt.Store.Load(ctx, id)
}

func atoi(flag, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, usageErr("--%s wants a non-negative number, not %q", flag, v)
	}
	return n, nil
}
