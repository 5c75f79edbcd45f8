package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

const insertSession = `INSERT INTO sessions(id, op, lineage, status, head, len, base_lane, base_len, compact_from, created, updated)
	VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// compactAt is how many chunks of small segments a lane accumulates before
// they are merged into one, so that loading a long session reads few rows.
const compactAt = 64

// Commit implements store.Store.
func (s *Store) Commit(ctx context.Context, sess *session.Session, prev session.ChunkID) error {
	// Encode the new chunks here, in the caller's goroutine, so the single
	// writer spends its time on SQL; it falls back to encoding itself if the
	// stored length turns out to differ.
	pre, err := preEncode(sess, prev)
	if err != nil {
		return fmt.Errorf("commit %s: %w", sess.ID(), err)
	}
	if err := s.check(); err != nil {
		return err
	}
	fence := fenceOf(ctx)
	born := bornScope(ctx)
	err = s.w.submit(ctx, &job{ctx: ctx, early: s.dur != store.Sync, light: true, done: make(chan error, 1),
		fn: func(tx *wtx, evs *[]store.Event) error { return commitTx(tx, sess, prev, fence, born, pre, evs) }})
	if err != nil {
		return fmt.Errorf("commit %s: %w", sess.ID(), err)
	}
	return nil
}

// encoded is a segment of sess's chunks [from, Len), prepared by the caller.
type encoded struct {
	from int
	data []byte
}

// dataFrom returns the prepared segment if it starts at from, else nil.
func (e *encoded) dataFrom(from int) []byte {
	if e == nil || e.from != from {
		return nil
	}
	return e.data
}

// preEncode guesses what the writer will store: the chunks after prev.
func preEncode(sess *session.Session, prev session.ChunkID) (*encoded, error) {
	from := -1
	switch {
	case prev == "" && len(sess.Lineage().Parents) == 0:
		from = 0
	case prev != "":
		for i := sess.Len() - 1; i >= max(0, sess.Len()-1024); i-- {
			if sess.Chunk(i).ID == prev {
				from = i + 1
				break
			}
		}
	}
	if from < 0 || from >= sess.Len() {
		return nil, nil
	}
	data, err := segmentFrom(sess, from)
	if err != nil {
		return nil, err
	}
	return &encoded{from: from, data: data}, nil
}

func segmentFrom(sess *session.Session, from int) ([]byte, error) {
	cs := make([]session.Chunk, 0, sess.Len()-from)
	for _, c := range sess.From(from) {
		cs = append(cs, c)
	}
	return backend.AppendSegment(nil, cs)
}

// commitTx runs as a light job: everything that can refuse the commit is
// checked before the first write, and write errors abort the batch. The
// fence, if any, is checked first: a fenced-out writer is refused even a
// retry of a commit that was stored before.
func commitTx(tx *wtx, sess *session.Session, prev session.ChunkID, fence *store.Fence, born map[string]string, pre *encoded, evs *[]store.Event) error {
	if err := checkFence(tx, fence); err != nil {
		if errors.Is(err, store.ErrFenced) {
			return err // refused before any write: the batch goes on
		}
		return abort(err)
	}
	l := tx.w.heads[sess.ID()]
	if l == nil {
		l = &headRow{}
		err := tx.QueryRow(selectHead, sess.ID()).Scan(&l.num, &l.head, &l.len, &l.compact)
		if errors.Is(err, sql.ErrNoRows) {
			if prev != "" {
				return fmt.Errorf("%w: the session is not stored, but the commit expects head %s", store.ErrConflict, prev.Short())
			}
			return createTx(tx, sess, born, pre, evs)
		}
		if err != nil {
			return abort(err)
		}
		l.known = l.len == l.compact // an empty tail
		tx.w.heads[sess.ID()] = l
	}
	switch {
	case l.head == sess.Head():
		return nil // committed before: a retry
	case l.head != prev:
		return fmt.Errorf("%w: stored head is %s, the commit expects %s", store.ErrConflict, l.head.Short(), prev.Short())
	case sess.Len() < l.len || (l.len > 0 && sess.Chunk(l.len-1).ID != l.head):
		return fmt.Errorf("%w: the session does not extend its stored head %s", store.ErrConflict, l.head.Short())
	}
	data := pre.dataFrom(l.len)
	if data == nil {
		var err error
		if data, err = segmentFrom(sess, l.len); err != nil {
			return err
		}
	}
	row := segRow{lane: l.num, first: l.len, n: sess.Len() - l.len, data: data,
		head: sess.Head(), len: sess.Len(), updatedUs: time.Now().UnixMicro()}
	if sess.Len()-l.compact >= compactAt {
		if err := tx.compactInto(l, &row); err != nil {
			return abort(err)
		}
	} else {
		tx.w.extendTail(l, data)
	}
	row.compact = l.compact
	tx.w.pending = append(tx.w.pending, row)
	l.head, l.len = sess.Head(), sess.Len()
	*evs = append(*evs, store.Event{ID: sess.ID(), Head: sess.Head(), Len: sess.Len()})
	return nil
}

func createTx(tx *wtx, sess *session.Session, born map[string]string, pre *encoded, evs *[]store.Event) error {
	if err := tx.flush(); err != nil { // the base may be among the queued appends
		return abort(err)
	}
	return abort(create(tx, sess, born, pre, evs))
}

// bornScope is the scope labels a session created under ctx gets
// (store.WithCreateScope), or nil.
func bornScope(ctx context.Context) map[string]string {
	if sc, ok := store.CreateScope(ctx); ok {
		return sc.Labels()
	}
	return nil
}

func create(tx *wtx, sess *session.Session, born map[string]string, pre *encoded, evs *[]store.Event) error {
	lin := sess.Lineage()
	baseLane, baseLen, err := findBase(tx, sess, lin.Parents)
	if err != nil {
		return err
	}
	linJSON, err := json.Marshal(lin)
	if err != nil {
		return err
	}
	now := time.Now().UnixMicro()
	res, err := tx.Exec(insertSession,
		sess.ID(), lin.Op, string(linJSON), store.StatusOpen, sess.Head(), sess.Len(), baseLane, baseLen, baseLen, now, now)
	if err != nil {
		return err
	}
	num, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for i, p := range lin.Parents {
		if _, err := tx.Exec(`INSERT INTO parents(child, pos, parent) VALUES(?, ?, ?)`, sess.ID(), i, p); err != nil {
			return err
		}
	}
	switch {
	case born != nil:
		for _, k := range []string{store.LabelTenant, store.LabelProject} {
			if _, err := tx.Exec(`INSERT OR REPLACE INTO labels(id, key, value) VALUES(?, ?, ?)`, sess.ID(), k, born[k]); err != nil {
				return err
			}
		}
	case len(lin.Parents) > 0:
		// A session is born in its first parent's scope.
		if _, err := tx.Exec(inheritScope, sess.ID(), lin.Parents[0], store.LabelTenant, store.LabelProject); err != nil {
			return err
		}
	}
	data, err := writeChunks(tx, num, sess, baseLen, pre)
	if err != nil {
		return err
	}
	l := &headRow{num: num, head: sess.Head(), len: sess.Len(), compact: baseLen, known: true}
	if data != nil {
		tx.w.extendTail(l, data)
	}
	tx.w.heads[sess.ID()] = l
	*evs = append(*evs, store.Event{ID: sess.ID(), Head: sess.Head(), Len: sess.Len()})
	return nil
}

// findBase picks the stored parent sharing the longest prefix with sess.
func findBase(tx *wtx, sess *session.Session, parents []session.ID) (sql.NullInt64, int, error) {
	var stored []backend.StoredParent
	for _, p := range parents {
		pl, err := laneByID(tx, p)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return sql.NullInt64{}, 0, err
		}
		stored = append(stored, backend.StoredParent{Ref: pl.ref(), Len: pl.len, Head: pl.head})
	}
	best, k, err := backend.BestBase(source{tx}, sess, stored)
	if err != nil || best < 0 {
		return sql.NullInt64{}, 0, err
	}
	return sql.NullInt64{Int64: stored[best].Ref.Num, Valid: true}, k, nil
}

// writeChunks stores chunks [from, Len) of sess as one segment of lane num
// and returns it (nil if there are none).
func writeChunks(tx *wtx, num int64, sess *session.Session, from int, pre *encoded) ([]byte, error) {
	if from >= sess.Len() {
		return nil, nil
	}
	data := pre.dataFrom(from)
	if data == nil {
		var err error
		if data, err = segmentFrom(sess, from); err != nil {
			return nil, err
		}
	}
	_, err := tx.Exec(`INSERT INTO segments(lane, first, n, data) VALUES(?, ?, ?, ?)`, num, from, sess.Len()-from, data)
	return data, err
}
