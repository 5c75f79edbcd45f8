package store

import "fmt"

// Durability says when Commit returns relative to the disk. See
// docs/durability.md for exactly what each mode can lose.
type Durability string

const (
	// Sync (the default): Commit returns after the commit is on stable
	// storage (fsync'd). Nothing acknowledged is lost, on a crash or power loss.
	Sync Durability = "sync"
	// Async: Commit returns once the commit is checked (compare-and-swap)
	// and queued; it is written and fsync'd with the next group commit,
	// a few milliseconds later.
	Async Durability = "async"
	// Exit: like Async, but written without fsync; the data reaches stable
	// storage when the store is closed. For tests, benchmarks, throwaway runs.
	// On PostgreSQL, which cannot skip fsync for one client, Exit is Async
	// (synchronous_commit=off), and Close flushes the WAL.
	Exit Durability = "exit"
)

// ParseDurability reads a durability name; "" means Sync.
func ParseDurability(s string) (Durability, error) {
	switch d := Durability(s); d {
	case "":
		return Sync, nil
	case Sync, Async, Exit:
		return d, nil
	}
	return "", fmt.Errorf("store: unknown durability %q (want sync, async or exit)", s)
}
