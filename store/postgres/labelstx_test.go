package postgres

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// A session committed and labelled in one transaction: the labels are
// seen with it or not at all; a missing session and a broken fence each
// get their error and leave the transaction usable.
func TestSetLabelsTx(t *testing.T) {
	st := openStore(t, freshDB(t))
	ctx := t.Context()
	submit := func(s *session.Session, keep bool) {
		t.Helper()
		tx, err := st.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if err := st.CommitTx(ctx, tx, s, ""); err != nil {
			t.Fatal(err)
		}
		if err := st.SetLabelsTx(ctx, tx, s.ID(), map[string]string{"state": "queued", "kind": "run"}); err != nil {
			t.Fatal(err)
		}
		if err := st.SetLabelsTx(ctx, tx, "no-such-session", map[string]string{"a": "b"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("labelling a missing session: %v, want ErrNotFound", err)
		}
		fenced := store.WithFence(ctx, store.Fence{Session: s.ID(), Epoch: 7})
		if err := st.SetLabelsTx(fenced, tx, s.ID(), map[string]string{"state": "stolen"}); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("labelling under a stale fence: %v, want ErrFenced", err)
		}
		if err := st.SetLabelsTx(ctx, tx, s.ID(), map[string]string{"kind": ""}); err != nil {
			t.Fatalf("the transaction is not usable after the refused writes: %v", err)
		}
		if keep {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	kept := session.FromUser("kept")
	submit(kept, true)
	info, err := st.Info(ctx, kept.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Labels["state"] != "queued" || info.Labels["kind"] != "" || len(info.Labels) != 1 {
		t.Fatalf("labels after commit = %v, want only state=queued", info.Labels)
	}
	dropped := session.FromUser("dropped")
	submit(dropped, false)
	if _, err := st.Info(ctx, dropped.ID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a rolled-back submit is visible: %v", err)
	}
	if infos, err := st.List(ctx, store.Filter{Labels: map[string]string{"state": "queued"}}); err != nil || len(infos) != 1 {
		t.Fatalf("sessions labelled state=queued: %d (%v), want 1", len(infos), err)
	}
}

// Many sessions labelled in one statement: all or, if one is missing,
// none; empty values delete.
func TestSetManyLabelsTx(t *testing.T) {
	st := openStore(t, freshDB(t))
	ctx := t.Context()
	a, b := session.FromUser("a"), session.FromUser("b")
	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, s := range []*session.Session{a, b} {
		if err := st.CommitTx(ctx, tx, s, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetManyLabelsTx(ctx, tx, map[session.ID]map[string]string{
		a.ID(): {"state": "queued", "kind": "run"},
		b.ID(): {"state": "queued"},
	}); err != nil {
		t.Fatal(err)
	}
	ghost := session.NewID()
	err = st.SetManyLabelsTx(ctx, tx, map[session.ID]map[string]string{a.ID(): {"state": "lost"}, ghost: {"state": "lost"}})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), string(ghost)) {
		t.Fatalf("labelling with a missing session: %v, want ErrNotFound naming %s", err, ghost)
	}
	if err := st.SetManyLabelsTx(ctx, tx, map[session.ID]map[string]string{a.ID(): {"kind": ""}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[session.ID]map[string]string{a.ID(): {"state": "queued"}, b.ID(): {"state": "queued"}} {
		info, err := st.Info(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(info.Labels, want) {
			t.Fatalf("labels of %s = %v, want %v", id, info.Labels, want)
		}
	}
}
