package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	_ "github.com/openrath/rath/store/sqlite" // registers the "sqlite" scheme
)

// A store is opened by URL; the sqlite backend registers its scheme when
// imported. Commit moves a session's head with compare-and-swap, Load reads
// the whole session back, Tail only its last chunks, and a stale head is
// refused with ErrConflict.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rath-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	st, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "rath.db"))
	if err != nil {
		panic(err)
	}
	defer st.Close()

	s := session.FromUser("summarise the incident").Append(session.Note("the disk filled up"))
	if err := st.Commit(ctx, s, ""); err != nil { // "": a session the store has not seen
		panic(err)
	}
	more := s.Append(session.Assistant("The disk filled up at 02:00."))
	if err := st.Commit(ctx, more, s.Head()); err != nil {
		panic(err)
	}

	loaded, err := st.Load(ctx, s.ID())
	if err != nil {
		panic(err)
	}
	fmt.Println(loaded.Len(), loaded.Head() == more.Head(), loaded.Verify() == nil)

	last, err := st.Tail(ctx, s.ID(), 1)
	if err != nil {
		panic(err)
	}
	fmt.Println(last[0].Kind, last[0].Text())

	info, err := st.Info(ctx, s.ID())
	if err != nil {
		panic(err)
	}
	fmt.Println(info.Len, info.Status)

	// A writer that still believes the head is s.Head() loses.
	other := s.Append(session.Assistant("It was the network."))
	err = st.Commit(ctx, other, s.Head())
	fmt.Println(errors.Is(err, store.ErrConflict))
	// Output:
	// 3 true true
	// assistant The disk filled up at 02:00.
	// 3 open
	// true
}
