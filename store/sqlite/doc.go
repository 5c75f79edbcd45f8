// Package sqlite is the embedded store: one SQLite database file in WAL mode
// (modernc.org/sqlite, pure Go), one writer goroutine that group-commits
// across sessions, and parallel readers.
//
// Import it for its side effect to register the "sqlite" URL scheme:
//
//	import _ "github.com/openrath/rath/store/sqlite"
//	st, err := store.Open(ctx, "sqlite:///home/me/.rath/rath.db?durability=sync")
//
// One process should own a database in async and exit durability; in sync
// durability several processes may share it (every commit re-checks the
// head inside an immediate transaction).
//
// Watch reports other processes' writes on the same file too: while a
// store is watched it polls a change log in the file, which writers fill
// only while another store watches.
//
// A fenced write (store.WithFence) reads the run's epoch inside the
// writer's transaction, right before it writes; a fenced-out commit fails
// alone, without disturbing the others of its group commit.
package sqlite
