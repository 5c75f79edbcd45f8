package secret

import "errors"

var (
	// ErrBadRef: a string is not a well-formed reference (Parse).
	ErrBadRef = errors.New("secret: bad reference")
	// ErrUnknownResolver: no resolver is registered under a reference's
	// resolver name.
	ErrUnknownResolver = errors.New("secret: no such resolver")
	// ErrNotFound: the resolver has no value for the reference (an unset
	// or empty environment variable, a missing or empty file, an empty
	// value from any resolver).
	ErrNotFound = errors.New("secret: not found")
	// ErrUnsafe: a secret file's permissions or type are unsafe (readable
	// or writable by others, not a regular file).
	ErrUnsafe = errors.New("secret: unsafe")
	// ErrTooLarge: a secret file is larger than MaxFileSize.
	ErrTooLarge = errors.New("secret: too large")
)
