package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/openrath/rath/store"
)

// maxCached bounds the cache of authenticated tokens; when it is full it
// starts again empty.
const maxCached = 4096

// cached is one token authenticated from the store.
type cached struct {
	info Info
	at   time.Time // when it was read
}

// Authenticate returns the principal of a token's secret. A credential
// without TokenPrefix is an error wrapping ErrUnrecognized; an unknown,
// revoked or expired token, or one whose record names an invalid tenant or
// project (CheckScope), ErrUnauthenticated.
//
// What it reads is trusted for the cache TTL (DefaultCacheTTL): a token
// revoked by another process stops working here within it, one revoked by
// this process at once. Expiry is checked on every call.
func (t *Tokens) Authenticate(ctx context.Context, bearer string) (Principal, error) {
	if !strings.HasPrefix(bearer, TokenPrefix) {
		return Principal{}, ErrUnrecognized
	}
	sum := sha256.Sum256([]byte(bearer))
	now := t.now()
	info, gen, ok := t.cachedInfo(sum, now)
	if !ok {
		var err error
		if info, err = t.byHash(ctx, sum); err != nil {
			return Principal{}, err
		}
		t.remember(sum, info, now, gen)
	}
	if !info.Active(now) {
		return Principal{}, fmt.Errorf("%w: token %s has expired or was revoked", ErrUnauthenticated, info.ID)
	}
	if err := info.checkScope(); err != nil {
		// A record made before its names were checked, or edited since.
		return Principal{}, fmt.Errorf("%w: token %s: %w", ErrUnauthenticated, info.ID, err)
	}
	return info.principal(), nil
}

// byHash reads the token whose secret hashes to sum.
func (t *Tokens) byHash(ctx context.Context, sum [sha256.Size]byte) (Info, error) {
	want := hex.EncodeToString(sum[:])
	f := store.Filter{Labels: map[string]string{LabelKind: kindToken, LabelTokenHash: want}, Status: []store.Status{store.StatusActive}}
	infos, err := t.st.List(ctx, f)
	if err != nil {
		return Info{}, fmt.Errorf("auth: authenticate: %w", err)
	}
	for _, si := range infos {
		got := si.Labels[LabelTokenHash]
		if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			continue
		}
		if info, err := infoOf(si); err == nil {
			return info, nil
		}
	}
	return Info{}, fmt.Errorf("%w: unknown token", ErrUnauthenticated)
}

// cachedInfo returns the cached token of sum, if any is fresh, and the
// cache's generation, which remember needs.
func (t *Tokens) cachedInfo(sum [sha256.Size]byte, now time.Time) (Info, uint64, bool) {
	if t.ttl <= 0 {
		return Info{}, 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.cache[sum]
	if !ok || now.Sub(c.at) >= t.ttl || now.Before(c.at) {
		return Info{}, t.gen, false
	}
	c.info.Grants = slices.Clone(c.info.Grants)
	return c.info, t.gen, true
}

// remember caches a token read from the store, unless the cache was
// forgotten since generation gen (a revocation here may have followed
// the read).
func (t *Tokens) remember(sum [sha256.Size]byte, info Info, now time.Time, gen uint64) {
	if t.ttl <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if gen != t.gen {
		return
	}
	if len(t.cache) >= maxCached {
		clear(t.cache)
	}
	info.Grants = slices.Clone(info.Grants)
	t.cache[sum] = cached{info: info, at: now}
}

// forget drops everything cached: a token was revoked here.
func (t *Tokens) forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.cache)
	t.gen++
	t.anyC = anyCache{}
}
