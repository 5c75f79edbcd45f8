package auth

import (
	"context"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// DefaultKeysMaxAge is how long an OIDC key set is trusted before it is
// fetched again.
const DefaultKeysMaxAge = time.Hour

// agedKeys is a provider's key set that is fetched again once it is older
// than maxAge. go-oidc's remote key set fetches the set again only when a
// token's key is not in it, so on its own a key the provider retired would
// be trusted for as long as the process runs; this bounds that to maxAge.
type agedKeys struct {
	ctx    context.Context // of the fetches: a client, no cancellation
	url    string
	maxAge time.Duration
	now    func() time.Time

	mu   sync.Mutex
	set  *oidc.RemoteKeySet
	made time.Time
	// remade: set was made afresh after a signature failed, and no token
	// has verified with it since.
	remade bool
}

func (k *agedKeys) current() *oidc.RemoteKeySet {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	if k.set == nil || now.Sub(k.made) >= k.maxAge || now.Before(k.made) {
		k.set, k.made, k.remade = oidc.NewRemoteKeySet(k.ctx, k.url), now, false
	}
	return k.set
}

// VerifySignature implements oidc.KeySet: the verifier calls it once it
// has checked the token's algorithm.
//
// A signature that does not verify is tried once more on a key set made
// afresh: go-oidc's remote key set hands the caller that comes right after
// a fetch the keys of that fetch, even when it fetches because those keys
// lack the token's (the fetch releases its waiters before it lets the
// next one start), so a token of a key the provider has just added can
// fail once after a rotation. To bound what forged tokens cost the
// provider, a set is made afresh only once until a token verifies again.
func (k *agedKeys) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	set := k.current()
	payload, err := set.VerifySignature(ctx, jwt)
	if err == nil {
		k.verified(set)
		return payload, nil
	}
	fresh := k.afresh(set)
	if fresh == nil {
		return nil, err
	}
	payload, err = fresh.VerifySignature(ctx, jwt)
	if err == nil {
		k.verified(fresh)
	}
	return payload, err
}

// afresh replaces set with a new key set, unless set was made afresh
// already and no token has verified since, or another caller replaced it
// meanwhile (then that one is returned).
func (k *agedKeys) afresh(set *oidc.RemoteKeySet) *oidc.RemoteKeySet {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.set != set:
		return k.set
	case k.remade:
		return nil
	}
	k.set, k.remade = oidc.NewRemoteKeySet(k.ctx, k.url), true
	return k.set
}

// verified notes that a token verified with set.
func (k *agedKeys) verified(set *oidc.RemoteKeySet) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.set == set {
		k.remade = false
	}
}
