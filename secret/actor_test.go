package secret

import (
	"context"
	"testing"
)

// TestActor: an observer sees the actor of the resolution's context, and
// none in a context without one.
func TestActor(t *testing.T) {
	rs := NewResolvers()
	var seen []Actor
	var none int
	rs.Observe(func(ctx context.Context, _ Ref, _ error) {
		if a, ok := ActorOf(ctx); ok {
			seen = append(seen, a)
		} else {
			none++
		}
	})
	ref := MustParse("secret://env/RATH_TEST_ACTOR_UNSET")
	want := Actor{Principal: "token:tok_1", Tenant: "acme", Project: "web"}
	_, _ = rs.Resolve(WithActor(context.Background(), want), ref)
	_, _ = rs.Resolve(context.Background(), ref)
	if len(seen) != 1 || seen[0] != want || none != 1 {
		t.Fatalf("actors %+v, %d without", seen, none)
	}
}
