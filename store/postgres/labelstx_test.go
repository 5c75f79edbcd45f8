package postgres

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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

// Label writes in the caller's transaction notify watchers only when it
// commits: SetLabelsTx's and SetManyLabelsTx's events (one per session)
// arrive after the commit, and a rolled-back transaction's never do.
func TestLabelsTxWatch(t *testing.T) {
	st := openStore(t, freshDB(t))
	ctx := store.WithLabelEvents(t.Context())
	events, err := st.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := session.FromUser("a"), session.FromUser("b")
	for _, s := range []*session.Session{a, b} {
		if err := st.Commit(ctx, s, ""); err != nil {
			t.Fatal(err)
		}
		if ev := nextEvent(t, events); ev.Labels || ev.ID != s.ID() {
			t.Fatalf("event %+v, want the commit of %s", ev, s.ID())
		}
	}
	// label runs fn in a transaction and commits it or rolls it back.
	label := func(keep bool, fn func(tx pgx.Tx) error) {
		t.Helper()
		tx, err := st.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if err := fn(tx); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-events:
			t.Fatalf("event %+v before the transaction ended", ev)
		case <-time.After(50 * time.Millisecond):
		}
		if keep {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	one := func(tx pgx.Tx) error {
		return st.SetLabelsTx(ctx, tx, a.ID(), map[string]string{"state": "queued"})
	}
	many := func(tx pgx.Tx) error {
		return st.SetManyLabelsTx(ctx, tx, map[session.ID]map[string]string{a.ID(): {"state": "done"}, b.ID(): {"state": "done"}})
	}
	label(false, one)
	label(false, many)
	label(true, one)
	if ev := nextEvent(t, events); !ev.Labels || ev.ID != a.ID() || ev.Head != a.Head() || ev.Len != a.Len() {
		t.Fatalf("event %+v, want SetLabelsTx's on %s (the rolled-back ones sent nothing)", ev, a.ID())
	}
	label(true, many)
	got := map[session.ID]bool{}
	for range 2 {
		ev := nextEvent(t, events)
		if !ev.Labels {
			t.Fatalf("event %+v, want SetManyLabelsTx's", ev)
		}
		info, err := st.Info(ctx, ev.ID)
		if err != nil || info.Labels["state"] != "done" {
			t.Fatalf("on receipt of %+v: labels %v, %v; want state=done", ev, info.Labels, err)
		}
		got[ev.ID] = true
	}
	if !got[a.ID()] || !got[b.ID()] {
		t.Fatalf("SetManyLabelsTx's events name %v, want %s and %s", got, a.ID(), b.ID())
	}
	// A missing session makes SetManyLabelsTx write nothing, and notify
	// nothing either.
	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	err = st.SetManyLabelsTx(ctx, tx, map[session.ID]map[string]string{a.ID(): {"state": "lost"}, session.NewID(): {"state": "lost"}})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("labelling with a missing session: %v, want ErrNotFound", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	a2 := a.Append(session.User("after"))
	if err := st.Commit(ctx, a2, a.Head()); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events); ev.Labels || ev.Head != a2.Head() {
		t.Fatalf("event %+v, want the commit of %s (a refused SetManyLabelsTx notified?)", ev, a2.Head().Short())
	}
}

// SetLabels' transactional form (taken when its one statement hit a
// deadlock or a serialization failure) notifies with notifyLabels, on
// commit only.
func TestNotifyLabels(t *testing.T) {
	st := openStore(t, freshDB(t))
	ctx := store.WithLabelEvents(t.Context())
	events, err := st.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := session.FromUser("noted")
	if err := st.Commit(ctx, s, ""); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events); ev.Labels {
		t.Fatalf("event %+v, want the commit", ev)
	}
	for _, keep := range []bool{false, true} {
		err := st.write(ctx, func(tx pgx.Tx) error {
			if err := notifyLabels(ctx, tx, s.ID()); err != nil {
				return err
			}
			if !keep {
				return errors.New("roll back")
			}
			return nil
		})
		if keep != (err == nil) {
			t.Fatalf("write (keep %v): %v", keep, err)
		}
	}
	if ev := nextEvent(t, events); !ev.Labels || ev.ID != s.ID() || ev.Head != s.Head() || ev.Len != s.Len() {
		t.Fatalf("event %+v, want one label event on %s (the rolled-back one sent nothing)", ev, s.ID())
	}
	select {
	case ev := <-events:
		t.Fatalf("unexpected event %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
}
