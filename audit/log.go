package audit

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Options tune a Log. Zero fields take their defaults.
type Options struct {
	// Writer names this process in its lanes' labels (default
	// "HOST/PID").
	Writer string
	// LaneLimit is how many records a lane takes before it is sealed and
	// a new one begun (default DefaultLaneLimit). The Log keeps its lane
	// in memory, about 700 bytes a record.
	LaneLimit int
	// AnchorEvery is how many records may be committed before the lane's
	// anchor label is written again (default 1: after every commit).
	// Records after the last anchor are those an attacker could cut off a
	// lane's end unseen (see the package documentation).
	AnchorEvery int
	// MaxBatch caps the records one store commit carries (default 1024).
	MaxBatch int
	// Witness is how many of the newest other lanes a new lane's header
	// records the length and head of (default 64; negative: none).
	Witness int

	// WitnessFile, if set, is a file outside the database that the Log
	// publishes its lanes' heads to: a JSON line each time (time, lane,
	// length, head; see the package documentation), chained by hash to
	// the line before. A line is appended once WitnessEvery records have
	// been committed since the last, or WitnessInterval after the first
	// of them, and as a lane is sealed (at its bound and at Close).
	// VerifyWitness checks a store against the file. Several Logs, in one
	// process or several, may share a file; keep one file per store.
	// Open fails if the file cannot be opened or is not a witness file
	// (ErrNotWitness).
	WitnessFile string
	// WitnessEvery is how many committed records make a witness line due
	// (default DefaultWitnessEvery).
	WitnessEvery int
	// WitnessInterval is the longest a committed record waits for its
	// witness line (default DefaultWitnessInterval).
	WitnessInterval time.Duration
	// Logger receives what the Log cannot return to a caller: a witness
	// line it could not write (it is written with the next; Close
	// reports a failure that lasts). Nil: discarded.
	Logger *slog.Logger
}

// Defaults of Options.WitnessEvery and Options.WitnessInterval.
const (
	DefaultWitnessEvery    = 1000
	DefaultWitnessInterval = time.Second
)

// DefaultLaneLimit is Options.LaneLimit's default.
const DefaultLaneLimit = 20000

func (o Options) withDefaults() Options {
	if o.Writer == "" {
		host, _ := os.Hostname()
		if host == "" {
			host = "unknown"
		}
		o.Writer = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	if o.LaneLimit <= 0 {
		o.LaneLimit = DefaultLaneLimit
	}
	if o.AnchorEvery <= 0 {
		o.AnchorEvery = 1
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 1024
	}
	if o.Witness == 0 {
		o.Witness = 64
	}
	if o.WitnessEvery <= 0 {
		o.WitnessEvery = DefaultWitnessEvery
	}
	if o.WitnessInterval <= 0 {
		o.WitnessInterval = DefaultWitnessInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Log appends records to the audit log of a store: to a lane of its own,
// a session no other process writes, begun at its first Append. It is
// safe for concurrent use; concurrent Appends are committed together.
type Log struct {
	st store.Store
	o  Options
	// ctx is what the committer's store calls run under: Open's values,
	// never its cancellation.
	ctx context.Context

	mu       sync.RWMutex
	closed   bool
	inflight sync.WaitGroup // Appends between the closed check and the queue

	queue chan *pending
	quit  chan struct{} // closed by Close once no Append can enqueue
	done  chan struct{} // closed when the committer has finished

	closeOnce sync.Once
	closeErr  error

	w writer // the committer's own state
}

// pending is one Append waiting for its commit.
type pending struct {
	r    Record
	done chan error
}

// Open returns a Log writing to st. It writes nothing until the first
// Append. Close it to seal its lane.
func Open(ctx context.Context, st store.Store, o Options) (*Log, error) {
	if st == nil {
		return nil, fmt.Errorf("audit: open: no store")
	}
	o = o.withDefaults()
	l := &Log{st: st, o: o, ctx: context.WithoutCancel(ctx),
		queue: make(chan *pending, o.MaxBatch), quit: make(chan struct{}), done: make(chan struct{})}
	l.w = writer{l: l}
	if o.WitnessFile != "" {
		wf, err := openWitnessFile(o.WitnessFile)
		if err != nil {
			return nil, err
		}
		l.w.wf = wf
	}
	go l.run()
	return l, nil
}

// Append records r, setting its Seq and Time, and returns once it is
// durable in the store (as durable as the store's commits). An invalid
// record fails with an error wrapping ErrInvalid; a closed Log with
// ErrClosed. If ctx ends first Append returns its error, but the record
// may still be written.
func (l *Log) Append(ctx context.Context, r Record) error {
	if err := r.check(); err != nil {
		return err
	}
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return ErrClosed
	}
	l.inflight.Add(1)
	l.mu.RUnlock()
	p := &pending{r: r, done: make(chan error, 1)}
	select {
	case l.queue <- p:
		l.inflight.Done()
	case <-ctx.Done():
		l.inflight.Done()
		return fmt.Errorf("audit: append: %w", ctx.Err())
	}
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("audit: append: %w (the record may still be written)", ctx.Err())
	}
}

// Lane is the lane the Log writes now ("" before its first Append).
func (l *Log) Lane() session.ID {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	if l.w.cur == nil {
		return ""
	}
	return l.w.cur.ID()
}

// List is the package's List over the Log's store.
func (l *Log) List(ctx context.Context, f Filter) ([]Record, error) {
	return List(ctx, l.st, f)
}

// Close commits the records already appended, seals the lane (its anchor
// becomes its exact length and head), writes the lane's last witness line
// (Options.WitnessFile) and stops the Log. It does not close the store.
func (l *Log) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		l.inflight.Wait()
		close(l.quit)
		<-l.done
		l.closeErr = l.w.closeErr
	})
	return l.closeErr
}

// run is the committer: it takes every Append waiting, commits them in
// one store commit and answers each, and writes the witness lines due.
func (l *Log) run() {
	defer close(l.done)
	var due <-chan time.Time // the witness line's deadline, while one waits
	for {
		var batch []*pending
		select {
		case p := <-l.queue:
			batch = append(batch, p)
		case <-due:
			l.w.publish()
			due = l.w.rearm(nil)
			continue
		case <-l.quit:
			for {
				batch = l.drain(batch[:0])
				if len(batch) == 0 {
					break
				}
				l.w.commit(batch)
			}
			l.w.close()
			return
		}
		l.w.commit(l.drain(batch))
		// A failed anchor is written again after the next commit, and at
		// Close, whose seal reports its failure.
		_ = l.w.anchor()
		if l.w.unwitnessed() >= int64(l.o.WitnessEvery) {
			l.w.publish()
			due = nil
		}
		due = l.w.rearm(due)
	}
}

// drain adds the Appends already queued to batch, up to MaxBatch.
func (l *Log) drain(batch []*pending) []*pending {
	for len(batch) < l.o.MaxBatch {
		select {
		case p := <-l.queue:
			batch = append(batch, p)
		default:
			return batch
		}
	}
	return batch
}

// now is the time for records appended after last: never earlier, in UTC
// to the microsecond (what the chunks and SQL keep).
func now(last time.Time) time.Time {
	t := time.Now().UTC().Truncate(time.Microsecond)
	if t.Before(last) {
		return last
	}
	return t
}
