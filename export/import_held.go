package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/session/openrath"
	"github.com/openrath/rath/store"
)

// heldExport returns the stored session of which s, decoded from an
// OpenRath file, is the export: a session with s's id that Decode did not
// make (our own, exported and brought back). It returns nil if the store
// has no session with that id or has the import of an OpenRath file (which
// commitImported handles like our own files), and a conflict if the file
// is not what exporting the stored session writes now.
func heldExport(ctx context.Context, st store.Store, s *session.Session) (*session.Session, error) {
	info, err := st.Info(ctx, s.ID())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if info.Lineage.Op == openrath.ImportOp {
		return nil, nil
	}
	stored, err := st.Load(ctx, s.ID())
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := openrath.Encode(&b, stored); err != nil {
		return nil, err
	}
	again, err := openrath.Decode(&b)
	if err != nil {
		return nil, err
	}
	if again.Head() != s.Head() {
		return nil, fmt.Errorf("%w: the store holds session %s (%s), and the file is not its OpenRath export as it stands",
			store.ErrConflict, s.ID(), info.Lineage.Op)
	}
	return stored, nil
}
