package client

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/server"
	"github.com/openrath/rath/session"
)

func TestCompareMergeSearch(t *testing.T) {
	st, ts := serve(t, server.Options{}, nil)
	root := session.FromUser("start").Append(session.Assistant("one"), session.User("two"))
	commit(t, st, root, "")
	fork, err := root.ForkAt(2)
	if err != nil {
		t.Fatal(err)
	}
	fork = fork.Append(session.User("elsewhere"))
	commit(t, st, fork, "")
	c, _ := New(ts.URL)
	ctx := testCtx(t)

	cmp, err := c.Compare(ctx, root.ID(), fork.ID(), 0)
	if err != nil || cmp.Prefix != 2 || cmp.A.ID != root.ID() || cmp.B.ID != fork.ID() ||
		len(cmp.ASuffix.Chunks) != 1 || cmp.BSuffix.From != 2 || cmp.BSuffix.Chunks[0].ID != fork.Head() || cmp.ASuffix.Truncated {
		t.Fatalf("Compare: %+v, %v", cmp, err)
	}
	if _, err := c.Compare(ctx, root.ID(), session.NewID(), 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Compare with a missing session: %v", err)
	}

	merged, err := c.Merge(ctx, root.ID(), fork.ID())
	if err != nil || merged.Len != root.Len()+1 {
		t.Fatalf("Merge: %+v, %v", merged, err)
	}
	got, err := c.Session(ctx, merged.ID)
	if err != nil || got.Lineage.Kind != session.LineageMerge || !slices.Equal(got.Lineage.Parents, []session.ID{root.ID(), fork.ID()}) {
		t.Fatalf("the merge as stored: %+v, %v", got, err)
	}
	if _, err := c.Merge(ctx, root.ID(), "ses_nope"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Merge with a malformed id: %v", err)
	}

	var found []session.ID
	for in, err := range c.Sessions(ctx, SessionFilter{Search: strings.ToLower(string(fork.ID())[8:])}) {
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, in.ID)
	}
	if !slices.Equal(found, []session.ID{fork.ID()}) {
		t.Fatalf("Search found %v, want the fork", found)
	}
}
