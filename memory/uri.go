// Package memory is long-term state with provenance. Entries live at URIs
// memory://{user|agent|project|workflow|session}/<scope-id>/<path>; every
// entry records who wrote it — the session, the chunks that justify it, the
// agent, the time and the kind of evidence — and every operation done
// through a session appends a memory chunk to it, so the session graph
// alone answers "why was this memory present in this run, and what
// justified it?". Forget(DerivedFrom(run)) rolls back what a run wrote, and
// is recorded too.
package memory

import (
	"errors"
	"fmt"
	"strings"
)

// Scopes an entry can live in.
const (
	ScopeUser     = "user"
	ScopeAgent    = "agent"
	ScopeProject  = "project"
	ScopeWorkflow = "workflow"
	ScopeSession  = "session"
)

var (
	// ErrBadURI: a string is not a memory URI.
	ErrBadURI = errors.New("memory: bad URI")
	// ErrNotFound: no entry at a URI.
	ErrNotFound = errors.New("memory: not found")
	// ErrScope: an operation touched a scope it was not given.
	ErrScope = errors.New("memory: scope not allowed")
)

// URI names an entry.
type URI struct {
	Scope   string // one of the Scope constants
	ScopeID string // whose: a user, an agent name, a project...
	Path    string // within the scope, "/"-separated, not empty
}

// ParseURI parses memory://scope/scope-id/path.
func ParseURI(s string) (URI, error) {
	rest, ok := strings.CutPrefix(s, "memory://")
	if !ok {
		return URI{}, fmt.Errorf("%w: %q does not start with memory://", ErrBadURI, s)
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 || parts[1] == "" || parts[2] == "" {
		return URI{}, fmt.Errorf("%w: %q is not memory://<scope>/<scope-id>/<path>", ErrBadURI, s)
	}
	u := URI{Scope: parts[0], ScopeID: parts[1], Path: parts[2]}
	return u, u.Check()
}

// Check reports whether u is well formed.
func (u URI) Check() error {
	switch u.Scope {
	case ScopeUser, ScopeAgent, ScopeProject, ScopeWorkflow, ScopeSession:
	default:
		return fmt.Errorf("%w: scope %q (user, agent, project, workflow or session)", ErrBadURI, u.Scope)
	}
	if u.ScopeID == "" || strings.ContainsAny(u.ScopeID, "/\x00") {
		return fmt.Errorf("%w: scope id %q", ErrBadURI, u.ScopeID)
	}
	if u.Path == "" || strings.Contains(u.Path, "\x00") || strings.HasPrefix(u.Path, "/") || strings.Contains(u.Path, "//") {
		return fmt.Errorf("%w: path %q", ErrBadURI, u.Path)
	}
	return nil
}

// ScopeKey is "scope/scope-id", the unit of recall permissions.
func (u URI) ScopeKey() string { return u.Scope + "/" + u.ScopeID }

func (u URI) String() string { return "memory://" + u.Scope + "/" + u.ScopeID + "/" + u.Path }

// MustParseURI is ParseURI for URIs known to be good; it panics on a bad one.
func MustParseURI(s string) URI {
	u, err := ParseURI(s)
	if err != nil {
		panic(err)
	}
	return u
}
