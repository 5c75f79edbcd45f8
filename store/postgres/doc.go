// Package postgres is the shared store: one PostgreSQL database used by many
// worker processes at once (github.com/jackc/pgx/v5 with a connection pool).
//
// Import it for its side effect to register the "postgres" and "postgresql"
// URL schemes:
//
//	import _ "github.com/openrath/rath/store/postgres"
//	st, err := store.Open(ctx, "postgres://rath@db.internal/rath?durability=sync")
//
// The layout is the SQLite store's, in a schema named rath: a session is a
// lane (a row of rath.sessions); its chunks are stored as segments, runs of
// consecutive encoded chunks in one bytea row; a fork stores only its own
// suffix and reads the shared prefix from its base lane. Every commit moves a
// session's head by compare-and-swap under the session row's lock, so any
// number of processes can commit: the loser of a race gets store.ErrConflict.
// Reads run in one REPEATABLE READ snapshot, so a session whose prefix lives
// in other lanes is always read whole and consistent.
//
// The usual commit, appending to a stored head, is one statement; the
// appends of concurrent Commit calls in a process are pipelined into one
// implicit transaction (batch.go), which shares one WAL flush among them.
// Large commits are cut into segments of about 256 KiB, so reading the end
// of a long session reads a row or two, whatever the size of its commits.
//
// Every commit sends pg_notify('rath_commits', {"id","head","len"}) in its
// transaction, and every label write (SetLabels, SetLabelsTx,
// SetManyLabelsTx) one per session with "labels": true added, so Watch, in
// any process, sees commits and label changes as they happen. A NOTIFY is
// delivered only when its transaction commits; and a transaction that
// NOTIFYs takes a database-wide lock from its pre-commit until after its
// flush, so notifying transactions flush one at a time: appends are
// batched for that (batch.go), label writes are not (a worker's heartbeat
// label, once a second, is a NOTIFY a second).
//
// # Fencing
//
// Each session row has a fencing epoch (store.Fence). Advance is one
// UPDATE of it. A write whose context carries a fence (store.WithFence) —
// Commit, SetStatus, SetLabel — reads the fenced run's epoch with a row
// lock in its own transaction before it writes (FOR SHARE; FOR NO KEY
// UPDATE when it writes the run's own row), which Advance's UPDATE waits
// for and which waits for an Advance in flight, so an Advance and the
// writes under the epoch it supersedes are ordered: a write after the
// Advance fails with store.ErrFenced. A fenced commit therefore takes
// the transactional path, never the one-statement append; unfenced commits
// are unchanged.
//
// # Committing in the caller's transaction
//
// Pool returns the store's pgxpool.Pool, and CommitTx performs a Commit —
// the same checks, fence included, and the same writes — inside a
// transaction the caller began on it, so a caller can commit a session
// and insert rows of its own (a job queue's) atomically:
//
//	tx, err := st.Pool().Begin(ctx)
//	...
//	defer tx.Rollback(ctx)
//	if err := st.CommitTx(ctx, tx, s, prev); err != nil { ... }
//	if _, err := tx.Exec(ctx, `INSERT INTO jobs ...`); err != nil { ... }
//	err = tx.Commit(ctx)
//
// The commit's notification is sent when tx commits, and not at all if it
// rolls back.
//
// # Durability
//
// sync (the default) sets synchronous_commit=on: Commit returns after the
// server has flushed the commit's WAL to disk. async sets synchronous_commit
// off: Commit returns once the commit is applied and visible to everyone;
// the server's WAL writer flushes it within about three wal_writer_delay
// (600 ms by default). A crash of the client process loses nothing in
// either mode — the server holds every acknowledged commit — and a crash of
// the server, or power loss, loses at most that last fraction of a second of
// async commits (PostgreSQL never corrupts or half-applies a transaction).
//
// exit is the same as async on PostgreSQL. SQLite's exit skips fsync
// entirely until Close; PostgreSQL has no per-session way to do that (fsync
// is a server-wide setting, and turning it off risks the whole cluster), and
// synchronous_commit=off already takes the flush out of the commit path.
// Close of an async or exit store forces one synchronous commit, which
// flushes the WAL through every commit this store made.
package postgres
