package audit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// failing is a store whose commits fail while fail is set.
type failing struct {
	store.Store
	fail atomic.Bool
}

var errDisk = errors.New("disk on fire")

func (f *failing) Commit(ctx context.Context, s *session.Session, prev session.ChunkID) error {
	if f.fail.Load() {
		return errDisk
	}
	return f.Store.Commit(ctx, s, prev)
}

// A failed commit fails its Appends, and only those: the records after it
// take the sequence numbers the failed ones would have had.
func TestAuditFailedCommit(t *testing.T) {
	st := &failing{Store: sqliteBackend(t).open(t)}
	l := openLog(t, st, audit.Options{})
	appendN(t, l, 1, 2)
	st.fail.Store(true)
	if err := l.Append(t.Context(), record(3)); !errors.Is(err, errDisk) {
		t.Fatalf("append during a failing commit: %v", err)
	}
	st.fail.Store(false)
	appendN(t, l, 4, 4)
	rs, err := l.List(t.Context(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].Principal != "user-4" || rs[0].Seq != 3 {
		t.Fatalf("after a failed commit: %+v", rs)
	}
	mustVerify(t, st)
}
