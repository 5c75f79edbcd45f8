package auth

import (
	"context"
	"fmt"
	"time"
)

// anyCache remembers the last answer of Any.
type anyCache struct {
	known, any bool
	at         time.Time
}

// Any reports whether the store has had a token — working, revoked,
// expired, or revoked and collected by gc since: once a token was made, a
// credential is needed, so that revoking a leaked last token does not
// open loopback to anyone. The store's seal keeps the fact (see LabelSeal);
// only Reopen, an operator's deliberate act, undoes it. The answer is
// trusted for the cache TTL: a token created by another process takes
// effect here within it; by this process, at once.
func (t *Tokens) Any(ctx context.Context) (bool, error) {
	now := t.now()
	t.mu.Lock()
	a, gen := t.anyC, t.gen
	t.mu.Unlock()
	if a.known && t.ttl > 0 && now.Sub(a.at) < t.ttl && !now.Before(a.at) {
		return a.any, nil
	}
	found, err := t.sealed(ctx, now)
	if err != nil {
		return false, fmt.Errorf("auth: any token: %w", err)
	}
	t.mu.Lock()
	if gen == t.gen { // else a token was created or revoked here meanwhile
		t.anyC = anyCache{known: true, any: found, at: now}
	}
	t.mu.Unlock()
	return found, nil
}

// sawToken records that a token was just created here.
func (t *Tokens) sawToken() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gen++
	t.anyC = anyCache{known: true, any: true, at: t.now()}
}

// Implicit is the rule for requests without credentials: on loopback, while
// the store has never had a token (Any; or since Reopen), they act as
// Local() and ok is true. Anywhere else, or once a token was made, ok is
// false and the request needs a credential.
func (t *Tokens) Implicit(ctx context.Context, loopback bool) (Principal, bool, error) {
	if !loopback {
		return Principal{}, false, nil
	}
	some, err := t.Any(ctx)
	if err != nil || some {
		return Principal{}, false, err
	}
	return Local(), true, nil
}
