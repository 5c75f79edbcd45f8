package audit

import "errors"

// Sentinel errors; every error the package returns for these cases wraps
// one of them.
var (
	// ErrTampered: Verify found a lane edited, truncated, reordered or
	// removed behind the log's back.
	ErrTampered = errors.New("audit: the log has been tampered with")
	// ErrInvalid: a record that cannot be appended or decoded.
	ErrInvalid = errors.New("audit: invalid record")
	// ErrClosed: Append on a closed Log.
	ErrClosed = errors.New("audit: the log is closed")
	// ErrNotWitness: Options.WitnessFile names a file that is not a
	// witness file (its last line is not a witness line).
	ErrNotWitness = errors.New("audit: not an audit witness file")
)
