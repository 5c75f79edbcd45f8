package sqlite

import (
	"strings"

	"github.com/openrath/rath/session"
)

// Appends to known sessions — almost every commit — do not write when they
// run: they queue their segment and their new head here, and the batch
// writes them all with a few multi-row INSERTs and UPDATEs before it
// commits. SQLite's per-statement cost, not the disk, bounded group commit
// before this. Any job that reads or writes the database otherwise (creating
// a session, status, GC) flushes the queue first, so it sees every earlier
// job's writes.

type segRow struct {
	lane      int64
	first, n  int
	data      []byte
	head      session.ChunkID
	len       int
	compact   int // the lane's compact_from once this row is stored
	updatedUs int64
}

// tailDelete removes a lane's small segments from first on, which a
// compaction merged into a queued row (see tail.go).
type tailDelete struct {
	lane  int64
	first int
}

const deleteTail = `DELETE FROM segments WHERE lane = ? AND first >= ?`

// flush writes what is queued: the deletes of compacted segments first
// (a merged row takes the place of the first of them), then the segments,
// in chunks of the prepared batch sizes (see batchSizes), largest first,
// then the heads.
func (t *wtx) flush() error {
	w := t.w
	for _, d := range w.deletes {
		if _, err := t.Exec(deleteTail, d.lane, d.first); err != nil {
			return err
		}
	}
	w.deletes = w.deletes[:0]
	rows := w.pending
	if len(rows) == 0 {
		return nil
	}
	w.pending = rows[:0]
	// The last queued head of each lane wins; earlier ones in the batch are
	// superseded (their segments are still inserted).
	last := make(map[int64]int, len(rows))
	for i, r := range rows {
		last[r.lane] = i
	}
	heads := make([]segRow, 0, len(last))
	for i, r := range rows {
		if last[r.lane] == i {
			heads = append(heads, r)
		}
	}
	args := make([]any, 0, 5*min(len(rows), maxBatchRows))
	for len(rows) > 0 {
		k := batchSize(len(rows))
		args = args[:0]
		for _, r := range rows[:k] {
			args = append(args, r.lane, r.first, r.n, r.data)
		}
		if _, err := t.Exec(insertSegments(k), args...); err != nil {
			return err
		}
		rows = rows[k:]
	}
	for len(heads) > 0 {
		k := batchSize(len(heads))
		args = args[:0]
		if k == 1 { // the plain statement is cheaper than a one-row join
			r := heads[0]
			if _, err := t.Exec(updateHead, r.head, r.len, r.updatedUs, r.compact, r.lane); err != nil {
				return err
			}
			heads = heads[1:]
			continue
		}
		for _, r := range heads[:k] {
			args = append(args, r.lane, r.head, r.len, r.updatedUs, r.compact)
		}
		if _, err := t.Exec(updateHeads(k), args...); err != nil {
			return err
		}
		heads = heads[k:]
	}
	return nil
}

// unqueue drops the queued segments of a lane (a compaction merged them).
func (w *writer) unqueue(lane int64) {
	kept := w.pending[:0]
	for _, r := range w.pending {
		if r.lane != lane {
			kept = append(kept, r)
		}
	}
	clear(w.pending[len(kept):])
	w.pending = kept
}

// Multi-row statements are prepared once for each batch size in
// batchSizes: parsing a fresh statement for every batch cost more than a
// quarter of the writer's time. They are OR FAIL: a multi-row statement
// under the default ABORT keeps a statement journal (a copy of every page
// it changes) to undo itself, and any error aborts the whole batch anyway.
var batchSizes = []int{128, 64, 32, 16, 8, 4, 2, 1}

const maxBatchRows = 128

// batchSize is the largest prepared size that fits n rows.
func batchSize(n int) int {
	for _, k := range batchSizes {
		if k <= n {
			return k
		}
	}
	return 1
}

// insertSQL and updateSQL hold the statements for each batch size; they
// are built once and never change.
var insertSQL, updateSQL = batchStatements()

func batchStatements() (ins, upd map[int]string) {
	ins, upd = map[int]string{}, map[int]string{}
	for _, k := range batchSizes {
		ins[k] = multiRow(`INSERT OR FAIL INTO segments(lane, first, n, data) VALUES `, k, `(?,?,?,?)`, "")
		upd[k] = multiRow(`UPDATE OR FAIL sessions SET head = v.column2, len = v.column3, updated = v.column4, compact_from = v.column5 FROM (VALUES `, k,
			`(?,?,?,?,?)`, `) AS v WHERE sessions.lane = v.column1`)
	}
	return ins, upd
}

const updateHead = `UPDATE sessions SET head = ?, len = ?, updated = ?, compact_from = ? WHERE lane = ?`

func insertSegments(k int) string { return insertSQL[k] }
func updateHeads(k int) string    { return updateSQL[k] }

func multiRow(head string, k int, row, tail string) string {
	var q strings.Builder
	q.WriteString(head)
	for i := range k {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(row)
	}
	q.WriteString(tail)
	return q.String()
}
