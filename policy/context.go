package policy

import "context"

type deciderKey struct{}

// WithDecider returns ctx carrying d: the decider of the runs and agents
// working under ctx (an agent's own Config.Decider comes first). A nil d
// removes the one ctx carries.
func WithDecider(ctx context.Context, d Decider) context.Context {
	return context.WithValue(ctx, deciderKey{}, d)
}

// From returns the Decider ctx carries, or nil.
func From(ctx context.Context) Decider {
	d, _ := ctx.Value(deciderKey{}).(Decider)
	return d
}
