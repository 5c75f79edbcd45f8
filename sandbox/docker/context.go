package docker

import "context"

type sessionKey struct{}

// WithSession returns a context whose sandboxes are labelled as opened for
// session id (label rath.session), so `docker ps --filter` can tell them
// apart.
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// SessionFrom returns the session id set by WithSession, or "".
func SessionFrom(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}
