package postgres

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// One append that fails inside a batch rolls the batch back; the others in
// it are retried one by one and succeed.
func TestBatchSurvivesAFailingAppend(t *testing.T) {
	st, err := Open(t.Context(), Options{URL: freshDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 24
	ss := make([]*session.Session, n)
	for i := range ss {
		ss[i] = session.FromUser(fmt.Sprint("s", i))
		if err := st.Commit(t.Context(), ss[i], ""); err != nil {
			t.Fatal(err)
		}
	}
	// A stray row where session 0's next segment goes makes its append fail.
	if _, err := st.pool.Exec(t.Context(), `INSERT INTO rath.segments(lane, first, n, data)
		SELECT lane, len, 1, '\x01' FROM rath.sessions WHERE id = $1`, ss[0].ID()); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		errs := make([]error, n)
		next := make([]*session.Session, n)
		var wg sync.WaitGroup
		for i := range ss {
			next[i] = ss[i].Append(session.Note(fmt.Sprint("round ", round)))
			wg.Go(func() { errs[i] = st.Commit(t.Context(), next[i], ss[i].Head()) })
		}
		wg.Wait()
		if errs[0] == nil || errors.Is(errs[0], store.ErrConflict) {
			t.Fatalf("the append onto a stray row: err = %v, want a storage error", errs[0])
		}
		for i := 1; i < n; i++ {
			if errs[i] != nil {
				t.Fatalf("round %d: session %d failed with its batch: %v", round, i, errs[i])
			}
			ss[i] = next[i]
		}
	}
	for _, s := range ss {
		got, err := st.Load(t.Context(), s.ID())
		if err != nil || got.Head() != s.Head() {
			t.Fatalf("%s: %v", s.ID(), err)
		}
	}
}
