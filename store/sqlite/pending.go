package sqlite

import (
	"strings"

	"github.com/openrath/rath/session"
)

// Appends to known sessions — almost every commit — do not write when they
// run: they queue their segment and their new head here, and the batch
// writes them all with one multi-row INSERT and one UPDATE before it
// commits. SQLite's per-statement cost, not the disk, bounded group commit
// before this. Any job that reads or writes the database otherwise (creating
// a session, compaction, status, GC) flushes the queue first, so it sees
// every earlier job's writes.

type segRow struct {
	lane      int64
	first, n  int
	data      []byte
	head      session.ChunkID
	len       int
	updatedUs int64
}

// rowsPerInsert keeps a statement well under SQLite's 32766 parameters.
const rowsPerInsert = 200

// flush writes the queued appends.
func (t *wtx) flush() error {
	rows := t.w.pending
	if len(rows) == 0 {
		return nil
	}
	t.w.pending = rows[:0]
	for len(rows) > 0 {
		n := min(len(rows), rowsPerInsert)
		if err := t.flushRows(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

func (t *wtx) flushRows(rows []segRow) error {
	if len(rows) == 1 { // a lone commit: the prepared statements are cheaper
		r := rows[0]
		if _, err := t.Exec(`INSERT INTO segments(lane, first, n, data) VALUES(?, ?, ?, ?)`, r.lane, r.first, r.n, r.data); err != nil {
			return err
		}
		_, err := t.Exec(`UPDATE sessions SET head = ?, len = ?, updated = ? WHERE lane = ?`, r.head, r.len, r.updatedUs, r.lane)
		return err
	}
	var q strings.Builder
	args := make([]any, 0, 4*len(rows))
	q.WriteString(`INSERT INTO segments(lane, first, n, data) VALUES `)
	for i, r := range rows {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(`(?,?,?,?)`)
		args = append(args, r.lane, r.first, r.n, r.data)
	}
	if _, err := t.Tx.Exec(q.String(), args...); err != nil {
		return err
	}
	// The last queued head of each lane wins; earlier ones in the batch are
	// superseded (their segments are already in the INSERT above).
	last := make(map[int64]int, len(rows))
	for i, r := range rows {
		last[r.lane] = i
	}
	q.Reset()
	args = args[:0]
	q.WriteString(`UPDATE sessions SET head = v.column2, len = v.column3, updated = v.column4 FROM (VALUES `)
	first := true
	for i, r := range rows {
		if last[r.lane] != i {
			continue
		}
		if !first {
			q.WriteByte(',')
		}
		first = false
		q.WriteString(`(?,?,?,?)`)
		args = append(args, r.lane, r.head, r.len, r.updatedUs)
	}
	q.WriteString(`) AS v WHERE sessions.lane = v.column1`)
	_, err := t.Tx.Exec(q.String(), args...)
	return err
}
