package session

import "errors"

// Sentinel errors. Every error the package returns wraps one of these, so
// callers can act on them with errors.Is.
var (
	// ErrInvalid marks a malformed value: an unknown kind, a chunk whose body
	// does not match its kind, an id of the wrong form.
	ErrInvalid = errors.New("session: invalid")
	// ErrRange marks an index or length outside the session.
	ErrRange = errors.New("session: out of range")
	// ErrIncompatible marks a merge of sessions placed on different sandboxes
	// without a MergeOption that says which placement wins.
	ErrIncompatible = errors.New("session: incompatible placements")
	// ErrTampered marks a chain whose recomputed ids do not match the
	// recorded ones.
	ErrTampered = errors.New("session: chain does not verify")
	// ErrCorrupt marks an encoded session (JSONL) that cannot be decoded.
	ErrCorrupt = errors.New("session: corrupt encoding")
	// ErrVersion marks an encoding written with a schema version this build
	// does not read.
	ErrVersion = errors.New("session: unsupported schema version")
)
