package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// The seal. Once a store has had a token, a request without a credential
// is refused on loopback too — for good, not only while a token's record
// is kept: a revoked token's session is closed, and `rath gc` deletes
// closed sessions. So the fact is a record of its own, the seal: a
// session of store.SystemScope labelled LabelKind "seal", whose LabelSeal
// says SealSealed or, after Reopen, SealReopened. It is made active and
// never closed, so GC (closed, archived and failed sessions) never
// collects it.
//
// Create seals the store after it has labelled the new token's session
// and before the token works; concurrent creators may make two seals,
// which is harmless: the store is sealed while any seal says so. A store
// that holds tokens but no seal (one made before seals existed) is sealed
// all the same, and Any writes its seal the first time it sees it.

// LabelSeal is the state of a seal's session: SealSealed or SealReopened
// (any other value counts as sealed).
const LabelSeal = "rath.auth.seal"

// States of a seal.
const (
	SealSealed   = "sealed"
	SealReopened = "reopened"
)

// kindSeal is LabelKind's value on a seal's session.
const kindSeal = "seal"

// ErrLiveTokens: Reopen was asked while the store holds a token that
// still works; revoke it first.
var ErrLiveTokens = errors.New("auth: the store holds tokens that still work")

// sealed reports whether requests without a credential are refused on
// loopback (see Any): a seal says so; or the store has no seal and holds a
// token (and then it gets its seal now); or a token works.
func (t *Tokens) sealed(ctx context.Context, now time.Time) (bool, error) {
	seals, err := t.seals(ctx)
	if err != nil {
		return false, err
	}
	for _, s := range seals {
		if s.Labels[LabelSeal] != SealReopened {
			return true, nil
		}
	}
	infos, err := t.st.List(ctx, store.Filter{Labels: map[string]string{LabelKind: kindToken}})
	if err != nil {
		return false, err
	}
	if len(seals) == 0 {
		if len(infos) == 0 {
			return false, nil
		}
		// A store that had tokens before seals: seal it before gc can
		// delete them. If that fails, it is sealed all the same while the
		// tokens' records last, and the next read tries again.
		_ = t.newSeal(ctx, SealSealed)
		return true, nil
	}
	// Reopened: only a working token closes it (one being created, whose
	// creator has not sealed the store yet, is one).
	return len(working(infos, now)) > 0, nil
}

// EnsureSeal gives a store that holds tokens but no seal (one made before
// seals existed) its seal. Whatever deletes closed sessions — `rath gc`,
// which deletes revoked tokens — calls it first, and fails if it fails:
// else the store would forget it has had tokens.
func (t *Tokens) EnsureSeal(ctx context.Context) error {
	seals, err := t.seals(ctx)
	if err != nil {
		return fmt.Errorf("auth: seal: %w", err)
	}
	if len(seals) > 0 {
		return nil
	}
	infos, err := t.st.List(ctx, store.Filter{Labels: map[string]string{LabelKind: kindToken}, Limit: 1})
	if err != nil {
		return fmt.Errorf("auth: seal: %w", err)
	}
	if len(infos) == 0 {
		return nil
	}
	if err := t.newSeal(ctx, SealSealed); err != nil {
		return fmt.Errorf("auth: seal: %w", err)
	}
	return nil
}

// working returns the ids of the tokens among infos that work at now (a
// record that does not decode counts as working: the safe side).
func working(infos []store.Info, now time.Time) []string {
	var ids []string
	for _, si := range infos {
		if i, err := infoOf(si); err != nil || i.Active(now) {
			ids = append(ids, string(si.ID))
		}
	}
	return ids
}

// seals lists the store's seals: sessions of the system scope only, which
// no principal can create.
func (t *Tokens) seals(ctx context.Context) ([]store.Info, error) {
	sc := store.SystemScope
	return t.st.List(ctx, store.Filter{Labels: map[string]string{LabelKind: kindSeal}, Scope: &sc})
}

// mark sets every seal of the store to state, or makes one in that state
// if there is none.
func (t *Tokens) mark(ctx context.Context, state string) error {
	seals, err := t.seals(ctx)
	if err != nil {
		return err
	}
	if len(seals) == 0 {
		return t.newSeal(ctx, state)
	}
	for _, s := range seals {
		if s.Labels[LabelSeal] == state {
			continue
		}
		if err := t.st.SetLabels(ctx, s.ID, map[string]string{LabelSeal: state}); err != nil {
			return err
		}
	}
	return nil
}

// newSeal makes a seal in state: active, so that GC never collects it.
func (t *Tokens) newSeal(ctx context.Context, state string) error {
	ses := session.New().Append(session.Note("auth seal: once this store has had a token, every request needs a credential (rath token reopen undoes it)"))
	if err := t.st.Commit(store.WithCreateScope(ctx, store.SystemScope), ses, ""); err != nil {
		return err
	}
	if err := t.st.SetLabels(ctx, ses.ID(), map[string]string{LabelKind: kindSeal, LabelSeal: state}); err != nil {
		return err
	}
	return store.MoveTo(ctx, t.st, ses.ID(), store.StatusActive)
}

// Reopen lets requests without a credential on loopback act as the local
// principal again, in a store that has had tokens: the operator's
// deliberate act (`rath token reopen --yes`, which audits it). It refuses
// while a token still works, with an error wrapping ErrLiveTokens naming
// them: revoke them first. A token created meanwhile, by any process,
// seals the store again; if that happens while Reopen runs, Reopen fails.
// It applies at once in this process and within the cache TTL in others.
func (t *Tokens) Reopen(ctx context.Context) error {
	if err := t.refuseLive(ctx); err != nil {
		return err
	}
	if err := t.mark(ctx, SealReopened); err != nil {
		return fmt.Errorf("auth: reopen: %w", err)
	}
	t.forget()
	// A creator seals after its token is visible: a token seen now may
	// have been sealed for before this reopen, so seal again.
	if err := t.refuseLive(ctx); err != nil {
		if serr := t.mark(ctx, SealSealed); serr != nil {
			err = errors.Join(err, fmt.Errorf("auth: reopen: seal again: %w", serr))
		}
		t.forget()
		return err
	}
	seals, err := t.seals(ctx)
	if err != nil {
		return fmt.Errorf("auth: reopen: %w", err)
	}
	for _, s := range seals {
		if s.Labels[LabelSeal] != SealReopened {
			return fmt.Errorf("auth: reopen: another process sealed the store meanwhile (seal %s); try again", s.ID)
		}
	}
	return nil
}

// refuseLive is an error wrapping ErrLiveTokens if a token works.
func (t *Tokens) refuseLive(ctx context.Context) error {
	infos, err := t.st.List(ctx, store.Filter{Labels: map[string]string{LabelKind: kindToken}})
	if err != nil {
		return fmt.Errorf("auth: reopen: %w", err)
	}
	if ids := working(infos, t.now()); len(ids) > 0 {
		return fmt.Errorf("%w: %s (revoke them first: rath token revoke ID)", ErrLiveTokens, strings.Join(ids, ", "))
	}
	return nil
}
