package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// The change log tells watchers in other processes what this one wrote.
// A write transaction of the writer that publishes events also inserts one
// row into the table changes: the events it publishes, encoded in one
// blob, and the origin, a random number naming the Store that wrote them
// (so that a store's poller skips its own writer's events, which the
// writer published itself). One row per transaction, not per event, keeps
// the log's cost per commit small under group commit. seq is the rowid:
// it grows by one with every row, so a gap means rows were pruned before
// a poller read them. See crossproc.go for the reading side.
//
// Nobody reading the log, nothing is logged. A store that watches holds a
// lease in the table watchers, renewed by its poller; a writer logs while
// another store's lease is current. Writing the lease is a commit of
// another connection, so every writer sees it through the PRAGMA
// data_version it reads at the start of each batch, and reads the leases
// again only then: a store on a file nobody else writes pays nothing for
// the log.

const (
	// keepChanges is how many change rows the log keeps: far more write
	// transactions than any store commits within a poll interval.
	keepChanges = 4096
	// pruneEvery is how often, in rows, the writer deletes the rows
	// beyond keepChanges.
	pruneEvery = 256

	// leaseTTL is how long a watcher's lease lasts; its poller renews it
	// every leaseRenew. A watcher whose renewals fail until the lease ran
	// out is told it may have missed events.
	leaseTTL   = 60 * time.Second
	leaseRenew = 10 * time.Second

	insertChange = `INSERT INTO changes(origin, events) VALUES(?, ?)`
	pruneChanges = `DELETE FROM changes WHERE seq <= ?`
	selectLeases = `SELECT coalesce(max(until), 0) FROM watchers WHERE origin != ?`
)

// ErrChangeLog reports a change-log row that cannot be decoded.
var ErrChangeLog = errors.New("sqlite store: malformed change-log row")

// changeFormat is the first byte of an encoded row.
const changeFormat = 1

// Flags of an encoded event.
const flagLabels = 1

// newOrigin returns a random origin for a new Store: two stores on one
// file drawing the same one is as likely as a 63-bit collision.
func newOrigin() int64 {
	for {
		if o := rand.Int64(); o != 0 {
			return o
		}
	}
}

// readWatchers learns until when another store's lease asks this writer
// to log. If the leases cannot be read, the writer logs (until the next
// time another connection writes).
func (t *wtx) readWatchers() {
	w := t.w
	if err := t.QueryRow(selectLeases, w.origin).Scan(&w.logUntil); err != nil {
		w.logUntil = math.MaxInt64
	}
}

// logging reports whether another store's watchers read the change log.
func (w *writer) logging() bool {
	return w.logUntil > 0 && time.Now().UnixMicro() < w.logUntil
}

// logChanges records the batch's events for other processes' watchers and,
// every pruneEvery rows, drops the oldest rows.
func (t *wtx) logChanges(evs []store.Event) error {
	w := t.w
	w.logBuf = encodeEvents(w.logBuf[:0], evs)
	res, err := t.Exec(insertChange, w.origin, w.logBuf)
	if err != nil {
		return fmt.Errorf("change log: %w", err)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("change log: %w", err)
	}
	if seq%pruneEvery == 0 && seq > keepChanges {
		if _, err := t.Exec(pruneChanges, seq-keepChanges); err != nil {
			return fmt.Errorf("change log: prune: %w", err)
		}
	}
	return nil
}

// encodeEvents appends evs to buf: the format byte, then for each event
// its id and head (each a uvarint length and the bytes), its length (a
// uvarint) and its flags (one byte).
func encodeEvents(buf []byte, evs []store.Event) []byte {
	buf = append(buf, changeFormat)
	for _, ev := range evs {
		buf = binary.AppendUvarint(buf, uint64(len(ev.ID)))
		buf = append(buf, ev.ID...)
		buf = binary.AppendUvarint(buf, uint64(len(ev.Head)))
		buf = append(buf, ev.Head...)
		buf = binary.AppendUvarint(buf, uint64(ev.Len))
		var flags byte
		if ev.Labels {
			flags |= flagLabels
		}
		buf = append(buf, flags)
	}
	return buf
}

// decodeEvents reverses encodeEvents.
func decodeEvents(b []byte) ([]store.Event, error) {
	if len(b) == 0 || b[0] != changeFormat {
		return nil, fmt.Errorf("%w: unknown format", ErrChangeLog)
	}
	d := decoder{b: b[1:]}
	var out []store.Event
	for len(d.b) > 0 && d.err == nil {
		id := d.str()
		head := d.str()
		n := d.uvarint()
		flags := d.byte()
		out = append(out, store.Event{ID: session.ID(id), Head: session.ChunkID(head), Len: int(n), Labels: flags&flagLabels != 0})
	}
	if d.err != nil {
		return nil, d.err
	}
	return out, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > 1<<31 {
		d.err = fmt.Errorf("%w: bad number", ErrChangeLog)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = fmt.Errorf("%w: truncated", ErrChangeLog)
	}
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) byte() byte {
	if d.err == nil && len(d.b) == 0 {
		d.err = fmt.Errorf("%w: truncated", ErrChangeLog)
	}
	if d.err != nil {
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}
