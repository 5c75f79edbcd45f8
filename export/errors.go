package export

import "errors"

// Sentinel errors. Errors returned by this package wrap one of these (or an
// error of the store or session package) so callers can test them with
// errors.Is.
var (
	// ErrFormat marks a format name this package does not write; the
	// error names the format asked for.
	ErrFormat = errors.New("export: unknown format")
	// ErrNoGraphviz marks an SVG rendering that needs Graphviz's dot
	// program, which is not on PATH.
	ErrNoGraphviz = errors.New("export: Graphviz (dot) is not installed")
	// ErrImport marks a session file that cannot be imported: a corrupt or
	// foreign file (the error names the line), or a session the store holds
	// with a different history.
	ErrImport = errors.New("export: cannot import session")
)
