package cluster_test

import (
	"context"
	"database/sql"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite"
)

// pause stops p (SIGSTOP) at a moment it holds no SQLite write lock. A
// process stopped inside a write transaction keeps every other process from
// writing — SQLite cannot take a lock from a live process — so no worker
// could take over; that is not the zombie the tests mean (one stopped
// between its writes, whose late commits must be refused). On PostgreSQL p
// is stopped at once.
func (e *env) pause(p *proc) {
	e.t.Helper()
	path, ok := strings.CutPrefix(e.store, "sqlite://")
	if !ok {
		p.signal(syscall.SIGSTOP)
		return
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(200)")
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	for attempt := range 100 {
		p.signal(syscall.SIGSTOP)
		if writable(db) {
			return
		}
		p.signal(syscall.SIGCONT)
		time.Sleep(time.Duration(10+attempt%7*5) * time.Millisecond)
	}
	e.t.Fatal("the worker held the SQLite write lock at every attempt to pause it")
}

// writable reports whether a write transaction can begin on db now.
func writable(db *sql.DB) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return false
	}
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	return err == nil
}
