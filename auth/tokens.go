package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Tokens. A token is a session of the store (LabelKind "token") whose
// labels hold its record (LabelTokenRecord: Info as JSON) and the hex
// SHA-256 of its secret (LabelTokenHash), by which Authenticate finds it.
// The secret itself is returned once, by Create, and stored nowhere.
// Revoking a token wipes its hash, records when it was revoked and closes
// its session.

// Labels of a token's session.
const (
	LabelKind        = "rath.auth.kind"
	LabelTokenRecord = "rath.auth.token.record"
	LabelTokenHash   = "rath.auth.token.sha256"
)

// kindToken is LabelKind's value on a token's session.
const kindToken = "token"

// TokenPrefix starts every token's secret, so that a leaked one is
// recognisable (secret scanners, logs) and Chain knows it at a glance.
const TokenPrefix = "rath_"

// secretBytes is the randomness of a secret: 256 bits.
const secretBytes = 32

// MaxTokenName is the longest token name, in bytes.
const MaxTokenName = 128

// DefaultCacheTTL is how long Authenticate and Any trust what they read
// from the store. A token revoked (or the first token created) by another
// process takes effect here within it; by this process, at once.
const DefaultCacheTTL = 2 * time.Second

// Spec describes a token to create.
type Spec struct {
	// Name says what the token is for (at most MaxTokenName bytes).
	Name string
	// Tenant confines the token ("": DefaultScope); Project confines it to
	// one project of the tenant ("": every project).
	Tenant, Project string
	// Grants the token holds (see Grants); "*" only with Admin. With Admin
	// and no Grants, the token holds "*".
	Grants []string
	Admin  bool
	// Expires is when it stops working (zero: never).
	Expires time.Time
}

// Info describes a stored token: never its secret nor its hash.
type Info struct {
	ID      string    `json:"id"`
	Name    string    `json:"name,omitempty"`
	Tenant  string    `json:"tenant"`
	Project string    `json:"project,omitempty"`
	Grants  []string  `json:"grants"`
	Admin   bool      `json:"admin,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires,omitzero"`
	Revoked time.Time `json:"revoked,omitzero"`
}

// Active reports whether the token works at now: not revoked, not expired.
func (i Info) Active(now time.Time) bool {
	return i.Revoked.IsZero() && (i.Expires.IsZero() || now.Before(i.Expires))
}

// principal is the principal the token authenticates as.
// checkScope reports whether i's tenant and project are valid names (an
// empty one is the default).
func (i Info) checkScope() error {
	if i.Tenant != "" {
		if err := CheckScope(i.Tenant); err != nil {
			return fmt.Errorf("tenant: %w", err)
		}
	}
	if i.Project != "" {
		if err := CheckScope(i.Project); err != nil {
			return fmt.Errorf("project: %w", err)
		}
	}
	return nil
}

func (i Info) principal() Principal {
	return Principal{ID: i.ID, Kind: KindToken, Name: i.Name, Tenant: i.Tenant, Project: i.Project, Grants: slices.Clone(i.Grants)}
}

// Tokens creates, lists, revokes and authenticates the tokens of a store.
// It is safe for concurrent use.
type Tokens struct {
	st  store.Store
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cached
	gen   uint64 // raised by every token created or revoked here
	anyC  anyCache
}

// Option configures Tokens.
type Option func(*Tokens)

// WithCacheTTL sets how long lookups are trusted (DefaultCacheTTL; 0:
// every Authenticate and Any reads the store).
func WithCacheTTL(d time.Duration) Option { return func(t *Tokens) { t.ttl = max(d, 0) } }

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(t *Tokens) { t.now = now } }

// NewTokens returns the tokens of st.
func NewTokens(st store.Store, opts ...Option) *Tokens {
	t := &Tokens{st: st, ttl: DefaultCacheTTL, now: time.Now, cache: map[[sha256.Size]byte]cached{}}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Create stores a new token and returns its secret — the only time it is
// shown — with its Info. An invalid grant, or "*" without Admin, is an
// error wrapping ErrBadGrant; an invalid tenant or project, ErrBadScope;
// an invalid name or an expiry in the past, ErrBadToken.
func (t *Tokens) Create(ctx context.Context, s Spec) (string, Info, error) {
	now := t.now().UTC()
	info, err := s.info(now)
	if err != nil {
		return "", Info{}, err
	}
	raw := make([]byte, secretBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", Info{}, fmt.Errorf("auth: create token: %w", err)
	}
	secret := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(secret))

	ses := session.New().Append(session.Note("token " + strings.TrimSpace(s.Name)))
	if err := t.st.Commit(store.WithCreateScope(ctx, store.SystemScope), ses, ""); err != nil {
		return "", Info{}, fmt.Errorf("auth: create token: %w", err)
	}
	info.ID = string(ses.ID())
	rec, err := json.Marshal(info)
	if err != nil {
		return "", Info{}, err
	}
	labels := map[string]string{LabelKind: kindToken, LabelTokenRecord: string(rec), LabelTokenHash: hex.EncodeToString(sum[:])}
	if err := t.st.SetLabels(ctx, ses.ID(), labels); err != nil {
		return "", Info{}, fmt.Errorf("auth: create token: %w", err)
	}
	// Seal the store once the token is visible, before it works (see
	// Reopen for why in this order).
	if err := t.mark(ctx, SealSealed); err != nil {
		_ = t.Revoke(context.WithoutCancel(ctx), info.ID) // it never worked; its secret was never shown
		return "", Info{}, fmt.Errorf("auth: create token: seal the store: %w", err)
	}
	if err := store.MoveTo(ctx, t.st, ses.ID(), store.StatusActive); err != nil {
		return "", Info{}, fmt.Errorf("auth: create token: %w", err)
	}
	t.sawToken()
	return secret, info, nil
}

// info validates s into the record of a token created at now.
func (s Spec) info(now time.Time) (Info, error) {
	name := strings.TrimSpace(s.Name)
	if len(name) > MaxTokenName || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Info{}, fmt.Errorf("%w: the name must be at most %d bytes of printable text", ErrBadToken, MaxTokenName)
	}
	if !s.Expires.IsZero() && !s.Expires.After(now) {
		return Info{}, fmt.Errorf("%w: it would expire at %s, which is not in the future", ErrBadToken, s.Expires.UTC().Format(time.RFC3339))
	}
	tenant := cmpOr(strings.TrimSpace(s.Tenant), DefaultScope)
	if err := CheckScope(tenant); err != nil {
		return Info{}, fmt.Errorf("tenant: %w", err)
	}
	project := strings.TrimSpace(s.Project)
	if project != "" {
		if err := CheckScope(project); err != nil {
			return Info{}, fmt.Errorf("project: %w", err)
		}
	}
	grants, err := tokenGrants(s.Grants, s.Admin)
	if err != nil {
		return Info{}, err
	}
	if err := checkOperatorGrants(tenant, grants); err != nil {
		return Info{}, err
	}
	i := Info{Name: name, Tenant: tenant, Project: project, Grants: grants, Admin: s.Admin, Created: now}
	if !s.Expires.IsZero() {
		i.Expires = s.Expires.UTC()
	}
	return i, nil
}

// tokenGrants validates, sorts and deduplicates a token's grants.
func tokenGrants(gs []string, admin bool) ([]string, error) {
	out := make([]string, 0, len(gs))
	for _, g := range gs {
		p, err := ParseGrant(g)
		if err != nil {
			return nil, err
		}
		if p == Admin && !admin {
			return nil, fmt.Errorf("%w: %q allows everything; only an admin token may hold it", ErrBadGrant, Admin)
		}
		out = append(out, p)
	}
	if len(out) == 0 && admin {
		out = append(out, Admin)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: a token needs at least one grant (a token by itself authorizes nothing)", ErrBadGrant)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// List returns every token, revoked ones included, oldest first: never a
// secret nor a hash.
func (t *Tokens) List(ctx context.Context) ([]Info, error) {
	infos, err := t.st.List(ctx, store.Filter{Labels: map[string]string{LabelKind: kindToken}})
	if err != nil {
		return nil, fmt.Errorf("auth: list tokens: %w", err)
	}
	out := make([]Info, 0, len(infos))
	for _, si := range infos {
		if i, err := infoOf(si); err == nil {
			out = append(out, i)
		}
	}
	slices.SortFunc(out, func(a, b Info) int {
		if d := a.Created.Compare(b.Created); d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// infoOf reads a token's record from its session's Info.
func infoOf(si store.Info) (Info, error) {
	raw := si.Labels[LabelTokenRecord]
	if si.Labels[LabelKind] != kindToken || raw == "" {
		return Info{}, fmt.Errorf("%w: %s", ErrNoToken, si.ID)
	}
	var i Info
	if err := json.Unmarshal([]byte(raw), &i); err != nil {
		return Info{}, fmt.Errorf("auth: token %s: its record is malformed: %w", si.ID, err)
	}
	i.ID = string(si.ID)
	return i, nil
}

// Revoke stops the token id from working: its hash is wiped, its record
// says when it was revoked, and its session is closed. It applies at once
// in this process and within the cache TTL (DefaultCacheTTL) in others.
// Revoking a revoked token changes nothing; an unknown id is an error
// wrapping ErrNoToken.
func (t *Tokens) Revoke(ctx context.Context, id string) error {
	sid := session.ID(id)
	if err := sid.Validate(); err != nil {
		return fmt.Errorf("%w: %q", ErrNoToken, id)
	}
	si, err := t.st.Info(ctx, sid)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrNoToken, id)
	}
	if err != nil {
		return fmt.Errorf("auth: revoke token %s: %w", id, err)
	}
	info, err := infoOf(si)
	if err != nil {
		return err
	}
	if !info.Revoked.IsZero() {
		return nil
	}
	// A store of before seals gets its seal while the token's record is
	// there to show it had one (see Any).
	_ = t.EnsureSeal(ctx)
	info.Revoked = t.now().UTC()
	rec, err := json.Marshal(info)
	if err != nil {
		return err
	}
	if err := t.st.SetLabels(ctx, sid, map[string]string{LabelTokenRecord: string(rec), LabelTokenHash: ""}); err != nil {
		return fmt.Errorf("auth: revoke token %s: %w", id, err)
	}
	t.forget()
	if err := store.MoveTo(ctx, t.st, sid, store.StatusClosed); err != nil {
		return fmt.Errorf("auth: revoke token %s: close its session: %w", id, err)
	}
	return nil
}
