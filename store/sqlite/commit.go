package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// compactAt is how many chunks of small segments a lane accumulates before
// they are merged into one, so that loading a long session reads few rows.
const compactAt = 64

// Commit implements store.Store.
func (s *Store) Commit(ctx context.Context, sess *session.Session, prev session.ChunkID) error {
	err := s.write(ctx, func(tx *sql.Tx, evs *[]store.Event) error {
		return commitTx(tx, sess, prev, evs)
	})
	if err != nil {
		return fmt.Errorf("commit %s: %w", sess.ID(), err)
	}
	return nil
}

func commitTx(tx *sql.Tx, sess *session.Session, prev session.ChunkID, evs *[]store.Event) error {
	l, err := laneByID(tx, sess.ID())
	if errors.Is(err, store.ErrNotFound) {
		if prev != "" {
			return fmt.Errorf("%w: the session is not stored, but the commit expects head %s", store.ErrConflict, prev.Short())
		}
		return createTx(tx, sess, evs)
	}
	if err != nil {
		return err
	}
	switch {
	case l.head == sess.Head():
		return nil // committed before: a retry
	case l.head != prev:
		return fmt.Errorf("%w: stored head is %s, the commit expects %s", store.ErrConflict, l.head.Short(), prev.Short())
	case sess.Len() < l.len || (l.len > 0 && sess.Chunk(l.len-1).ID != l.head):
		return fmt.Errorf("%w: the session does not extend its stored head %s", store.ErrConflict, l.head.Short())
	}
	now := time.Now().UnixMicro()
	if err := writeChunks(tx, l.num, sess, l.len); err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE sessions SET head = ?, len = ?, updated = ? WHERE lane = ?`, sess.Head(), sess.Len(), now, l.num); err != nil {
		return err
	}
	if sess.Len()-l.compact >= compactAt {
		if err := compact(tx, l.num, l.compact, sess.Len()); err != nil {
			return err
		}
	}
	*evs = append(*evs, store.Event{ID: sess.ID(), Head: sess.Head(), Len: sess.Len()})
	return nil
}

func createTx(tx *sql.Tx, sess *session.Session, evs *[]store.Event) error {
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
	res, err := tx.Exec(`INSERT INTO sessions(id, op, lineage, status, head, len, base_lane, base_len, compact_from, created, updated)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
	if err := writeChunks(tx, num, sess, baseLen); err != nil {
		return err
	}
	*evs = append(*evs, store.Event{ID: sess.ID(), Head: sess.Head(), Len: sess.Len()})
	return nil
}

// findBase picks the stored parent sharing the longest prefix with sess.
func findBase(tx *sql.Tx, sess *session.Session, parents []session.ID) (sql.NullInt64, int, error) {
	var best sql.NullInt64
	bestLen := 0
	for _, p := range parents {
		pl, err := laneByID(tx, p)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return best, 0, err
		}
		n := min(pl.len, sess.Len())
		if n <= bestLen {
			continue
		}
		var k int
		if sess.Chunk(n-1).ID == mustID(tx, pl, n-1) {
			k = n // the usual case: a fork or derivation of the whole parent
		} else {
			// Ids cover their whole chain, so "same id at i" is monotone.
			var ferr error
			k = sort.Search(n, func(i int) bool {
				id, err := idAt(tx, pl, i)
				if err != nil {
					ferr = err
					return true
				}
				return id != sess.Chunk(i).ID
			})
			if ferr != nil {
				return best, 0, ferr
			}
		}
		if k > bestLen {
			best, bestLen = sql.NullInt64{Int64: pl.num, Valid: true}, k
		}
	}
	return best, bestLen, nil
}

// mustID is idAt for the fast path: an error just means "no match".
func mustID(tx *sql.Tx, l *lane, i int) session.ChunkID {
	if i == l.len-1 {
		return l.head
	}
	id, _ := idAt(tx, l, i)
	return id
}

func idAt(q querier, l *lane, i int) (session.ChunkID, error) {
	fs, err := frames(q, l, i, i+1)
	if err != nil {
		return "", err
	}
	return fs[0].ID, nil
}

// writeChunks stores chunks [from, Len) of sess as one segment of lane num.
func writeChunks(tx *sql.Tx, num int64, sess *session.Session, from int) error {
	if from >= sess.Len() {
		return nil
	}
	cs := make([]session.Chunk, 0, sess.Len()-from)
	for _, c := range sess.From(from) {
		cs = append(cs, c)
	}
	data, err := store.AppendSegment(nil, cs)
	if err != nil {
		return err
	}
	_, err = tx.Exec(`INSERT INTO segments(lane, first, n, data) VALUES(?, ?, ?, ?)`, num, from, len(cs), data)
	return err
}

// compact merges the lane's segments from `from` on into one.
func compact(tx *sql.Tx, num int64, from, to int) error {
	rows, err := tx.Query(`SELECT data FROM segments WHERE lane = ? AND first >= ? ORDER BY first`, num, from)
	if err != nil {
		return err
	}
	var parts [][]byte
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			rows.Close()
			return err
		}
		parts = append(parts, data)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(parts) > 1 {
		if _, err := tx.Exec(`DELETE FROM segments WHERE lane = ? AND first >= ?`, num, from); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO segments(lane, first, n, data) VALUES(?, ?, ?, ?)`, num, from, to-from, store.JoinSegments(parts)); err != nil {
			return err
		}
	}
	_, err = tx.Exec(`UPDATE sessions SET compact_from = ? WHERE lane = ?`, to, num)
	return err
}
