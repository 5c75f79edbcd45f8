package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/openrath/rath/store"
)

// revokeAndCollect revokes every token of st and runs the store's GC over
// everything closed, as `rath gc --older-than 0s` does; it fails unless
// the tokens' records are gone (else the test would prove nothing).
func revokeAndCollect(t *testing.T, st store.Store, tk *Tokens) {
	t.Helper()
	ctx := context.Background()
	ts, err := tk.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ts {
		if err := tk.Revoke(ctx, i.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.GC(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if ts, err := tk.List(ctx); err != nil || len(ts) != 0 {
		t.Fatalf("after gc the store still lists tokens %+v (%v): gc did not collect them", ts, err)
	}
}

// Revoking the last token and collecting its record does not reopen
// loopback: the store remembers it has had a token, here and in any other
// process.
func TestSealSurvivesGC(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		tk := NewTokens(st)
		if _, _, err := tk.Create(ctx, Spec{Name: "last", Grants: []string{"run.read"}}); err != nil {
			t.Fatal(err)
		}
		revokeAndCollect(t, st, tk)
		for name, x := range map[string]*Tokens{"this process": tk, "another process": NewTokens(st)} {
			if some, err := x.Any(ctx); err != nil || !some {
				t.Errorf("%s: Any after the last token was revoked and collected = %v, %v; want true", name, some, err)
			}
			if p, ok, err := x.Implicit(ctx, true); err != nil || ok {
				t.Errorf("%s: loopback acts as %+v (%v) after the last token was revoked and collected", name, p, err)
			}
		}
	})
}

// implicitIn reports whether loopback acts as the local principal, read
// afresh from st (as another process would).
func implicitIn(t *testing.T, st store.Store) bool {
	t.Helper()
	_, ok, err := NewTokens(st).Implicit(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// Reopen is refused while a token works; after the last is revoked it
// opens loopback again, here and elsewhere, gc or not; the next token
// seals the store again.
func TestReopen(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		tk := NewTokens(st)
		_, info, err := tk.Create(ctx, Spec{Name: "live", Grants: []string{"run.read"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := tk.Reopen(ctx); !errors.Is(err, ErrLiveTokens) || !strings.Contains(err.Error(), info.ID) {
			t.Fatalf("Reopen with a working token = %v; want ErrLiveTokens naming %s", err, info.ID)
		}
		if implicitIn(t, st) {
			t.Fatal("a refused Reopen opened loopback")
		}
		if err := tk.Revoke(ctx, info.ID); err != nil {
			t.Fatal(err)
		}
		if err := tk.Reopen(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := tk.Implicit(ctx, true); err != nil || !ok {
			t.Fatalf("after Reopen, in the reopening process: %v %v", ok, err)
		}
		if !implicitIn(t, st) {
			t.Fatal("after Reopen, in another process: loopback is still closed")
		}
		if _, err := st.GC(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if !implicitIn(t, st) {
			t.Fatal("after Reopen and gc: loopback is closed")
		}

		if _, _, err := tk.Create(ctx, Spec{Name: "next", Grants: []string{"run.read"}}); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := tk.Implicit(ctx, true); ok || implicitIn(t, st) {
			t.Fatal("a token created after Reopen does not close loopback")
		}
		revokeAndCollect(t, st, tk)
		if implicitIn(t, st) {
			t.Fatal("the token created after Reopen, revoked and collected, reopened loopback")
		}
	})
}

// unseal makes st a store of before seals: it forgets its seals.
func unseal(t *testing.T, st store.Store) {
	t.Helper()
	ctx := context.Background()
	seals, err := NewTokens(st).seals(ctx)
	if err != nil || len(seals) == 0 {
		t.Fatalf("seals: %+v %v", seals, err)
	}
	for _, s := range seals {
		if err := st.SetLabels(ctx, s.ID, map[string]string{LabelKind: "", LabelSeal: ""}); err != nil {
			t.Fatal(err)
		}
	}
}

// A store that holds tokens but no seal — made before seals existed —
// counts as sealed, and gets its seal before gc can delete the tokens:
// when it is read, or when a token is revoked.
func TestSealOfAnOlderStore(t *testing.T) {
	for _, first := range []string{"read", "revoke"} {
		t.Run(first, func(t *testing.T) {
			stores(t, func(t *testing.T, st store.Store) {
				ctx := context.Background()
				tk := NewTokens(st)
				if _, _, err := tk.Create(ctx, Spec{Name: "old", Grants: []string{"run.read"}}); err != nil {
					t.Fatal(err)
				}
				unseal(t, st)
				if first == "read" && implicitIn(t, st) {
					t.Fatal("a store holding a token but no seal opens loopback")
				}
				revokeAndCollect(t, st, tk)
				if implicitIn(t, st) {
					t.Fatal("a store of before, its token revoked and collected, opens loopback")
				}
			})
		})
	}
}

// Concurrent first tokens, from processes that each see no seal, leave the
// store sealed however their seals interleave; Reopen undoes every seal.
func TestSealConcurrentCreators(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := NewTokens(st).Create(ctx, Spec{Name: fmt.Sprint("t", i), Grants: []string{"run.read"}})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		tk := NewTokens(st)
		revokeAndCollect(t, st, tk)
		if implicitIn(t, st) {
			t.Fatal("concurrent first tokens, revoked and collected, leave loopback open")
		}
		if err := tk.Reopen(ctx); err != nil {
			t.Fatal(err)
		}
		if !implicitIn(t, st) {
			t.Fatal("Reopen left a seal of a concurrent creator")
		}
	})
}
