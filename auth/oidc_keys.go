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
}

func (k *agedKeys) current() *oidc.RemoteKeySet {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	if k.set == nil || now.Sub(k.made) >= k.maxAge || now.Before(k.made) {
		k.set, k.made = oidc.NewRemoteKeySet(k.ctx, k.url), now
	}
	return k.set
}

// VerifySignature implements oidc.KeySet: the verifier calls it once it
// has checked the token's algorithm.
func (k *agedKeys) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	return k.current().VerifySignature(ctx, jwt)
}
