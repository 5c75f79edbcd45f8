package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/session/openrath"
	"github.com/openrath/rath/store"
)

// Import reads our JSONL or OpenRath-Python JSONL (detected from the first
// line), verifies it, commits it to st and returns it.
//
// A corrupt file gives one error wrapping ErrImport and a
// *session.DecodeError that names the line at fault, and nothing is
// committed. A session the store already holds at that head (or further
// along the same history) is not an error; one it holds with a different
// history is (wrapping store.ErrConflict).
//
// An OpenRath file imports under the session id its UUID gives
// (openrath.IDOf), with its parents as lineage edges, so a family of files
// imported in any order is linked in the store as it was in the original;
// importing a file again changes nothing. An OpenRath export of a session
// the store holds (its UUID is the session's, openrath.UUIDOf) is that
// session: importing it back is not an error if the file is what exporting
// the stored session writes, and a conflict otherwise.
//
// A session whose lineage would close a cycle (it names itself as a
// parent, or a parent descends from it) is refused with an error wrapping
// openrath.ErrCycle.
func Import(ctx context.Context, st store.Store, r io.Reader) (*session.Session, error) {
	f, s, err := decodeAny(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrImport, err)
	}
	if err := s.Verify(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrImport, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("export: import %s: %w", s.ID(), err)
	}
	if f == formatOpenRath {
		held, err := heldExport(ctx, st, s)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrImport, s.ID(), err)
		}
		if held != nil {
			return held, nil
		}
	}
	if err := checkLineage(ctx, st, s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrImport, err)
	}
	if err := commitImported(ctx, st, s); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrImport, s.ID(), err)
	}
	if f == formatOpenRath && openrath.Closed(s) {
		if err := closeImported(ctx, st, s.ID()); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrImport, s.ID(), err)
		}
	}
	return s, nil
}

// closeImported gives an imported session whose file recorded that its
// run closed the status closed, unless it has moved on already.
func closeImported(ctx context.Context, st store.Store, id session.ID) error {
	info, err := st.Info(ctx, id)
	if err != nil {
		return err
	}
	for _, to := range []store.Status{store.StatusActive, store.StatusClosed} {
		if store.CanTransition(info.Status, to) {
			if err := st.SetStatus(ctx, id, to); err != nil {
				return err
			}
			info.Status = to
		}
	}
	return nil
}

// decodeAny detects the file's format and decodes it.
func decodeAny(r io.Reader) (fileFormat, *session.Session, error) {
	f, all, err := detect(r)
	if err != nil {
		return 0, nil, err
	}
	var s *session.Session
	if f == formatOpenRath {
		s, err = openrath.Decode(all)
	} else {
		s, err = session.Decode(all)
	}
	return f, s, err
}

// commitImported stores s unless the store holds it already.
func commitImported(ctx context.Context, st store.Store, s *session.Session) error {
	info, err := st.Info(ctx, s.ID())
	if errors.Is(err, store.ErrNotFound) {
		return st.Commit(ctx, s, "")
	}
	if err != nil {
		return err
	}
	if !sameLineage(info.Lineage, s.Lineage()) {
		return fmt.Errorf("%w: the store holds session %s with another lineage (%s)", store.ErrConflict, s.ID(), info.Lineage.Op)
	}
	switch {
	case info.Head == s.Head():
		return nil
	case info.Len < s.Len() && (info.Len == 0 || s.Chunk(info.Len-1).ID == info.Head):
		return st.Commit(ctx, s, info.Head)
	case info.Len > s.Len() && s.Len() > 0:
		cs, err := st.Range(ctx, s.ID(), s.Len()-1, s.Len())
		if err != nil {
			return err
		}
		if len(cs) == 1 && cs[0].ID == s.Head() {
			return nil // the store holds this history and more
		}
	}
	return fmt.Errorf("%w: the store holds session %s with another history (head %s at %d chunks; the file has %s at %d)",
		store.ErrConflict, s.ID(), info.Head.Short(), info.Len, s.Head().Short(), s.Len())
}

// sameLineage reports whether two lineages name the same parents and op.
func sameLineage(a, b session.Lineage) bool {
	return a.Op == b.Op && a.Kind == b.Kind && slices.Equal(a.Parents, b.Parents)
}
