package store

import "errors"

// Sentinel errors every backend returns (wrapped with context).
var (
	// ErrConflict: the session's stored head is not the expected one; another
	// writer moved it first. Reload, rebase and commit again.
	ErrConflict = errors.New("store: conflict: session head moved")
	// ErrNotFound: no such session (or chunk).
	ErrNotFound = errors.New("store: not found")
	// ErrTransition: the lifecycle does not allow the status change.
	ErrTransition = errors.New("store: invalid status transition")
	// ErrVersion: the database was written by a newer version of rath.
	ErrVersion = errors.New("store: database schema is newer than this build")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
	// ErrUnknownScheme: no backend is registered for the URL's scheme.
	ErrUnknownScheme = errors.New("store: unknown URL scheme")
)
