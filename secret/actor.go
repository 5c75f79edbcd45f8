package secret

import "context"

// Actor is whom a resolution is made for when it is not the process's own
// user: the principal of a request, or the principal who added what the
// secret is for (a tenant's webhook, resolved by a worker at each
// delivery). Observers record it in the resolution's place (the audit
// log's principal, tenant and project).
type Actor struct {
	// Principal names the principal as the audit log does ("token:tok_…").
	Principal string
	// Tenant and Project are the scope it acts in.
	Tenant, Project string
}

type actorKey struct{}

// WithActor returns ctx saying whom the secrets resolved in it are
// resolved for.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorOf is whom ctx says its secrets are resolved for (false if ctx says
// nothing: the process's own user).
func ActorOf(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}
