package sqlite

import "github.com/openrath/rath/store/internal/backend"

// Compaction (see compactAt) merges a lane's small segments, those from
// compact_from on, into one row. The writer remembers the bytes of those
// segments as it writes them (a lane's tail), so that merging needs no
// read: the lane's stored small rows are deleted with one statement, its
// queued ones are dropped, and the merged row takes their place in the
// batch's multi-row INSERT. A tail is known only while the writer has seen
// every segment of it: one loaded from the database with a non-empty tail
// is read back at its next compaction instead. Tails are forgotten with the
// heads (another process wrote, GC, a failed batch), and all of them when
// they would hold more than maxTailBytes.

const (
	maxTailBytes = 8 << 20
	maxTailPart  = maxTailBytes / 16 // a larger segment is not kept
)

// extendTail adds a segment just queued for l to its tail.
func (w *writer) extendTail(l *headRow, data []byte) {
	if !l.known {
		return
	}
	if len(data) > maxTailPart {
		w.resetTail(l)
		l.known = false
		return
	}
	if w.tailBytes+len(data) > maxTailBytes {
		w.dropTails()
		return
	}
	l.tail = append(l.tail, data)
	w.tailBytes += len(data)
}

// resetTail empties l's tail, which is then known.
func (w *writer) resetTail(l *headRow) {
	for _, p := range l.tail {
		w.tailBytes -= len(p)
	}
	l.tail, l.known = nil, true
}

// dropTails forgets every tail.
func (w *writer) dropTails() {
	for _, l := range w.heads {
		l.tail, l.known = nil, false
	}
	w.tailBytes = 0
}

// forget drops the cached heads, and their tails, after the database may
// have changed under the writer.
func (w *writer) forget() {
	clear(w.heads)
	w.tailBytes = 0
}

// compactInto turns row, the segment a commit to l is queuing, into the
// merged segment of l's whole tail: chunks [l.compact, row.first+row.n).
func (t *wtx) compactInto(l *headRow, row *segRow) error {
	w := t.w
	parts := l.tail
	if !l.known {
		// Read the tail back, with this batch's queued rows stored first.
		if err := t.flush(); err != nil {
			return err
		}
		var err error
		if parts, err = t.storedTail(l.num, l.compact); err != nil {
			return err
		}
	}
	if len(parts) > 0 {
		w.unqueue(l.num)
		w.deletes = append(w.deletes, tailDelete{lane: l.num, first: l.compact})
		row.data = backend.JoinSegments(append(parts[:len(parts):len(parts)], row.data))
		row.n += row.first - l.compact
		row.first = l.compact
	}
	w.resetTail(l)
	l.compact = row.first + row.n
	return nil
}

// storedTail reads the segments of lane num from first on.
func (t *wtx) storedTail(num int64, first int) ([][]byte, error) {
	rows, err := t.Query(`SELECT data FROM segments WHERE lane = ? AND first >= ? ORDER BY first`, num, first)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var parts [][]byte
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, err
		}
		parts = append(parts, data)
	}
	return parts, rows.Err()
}
