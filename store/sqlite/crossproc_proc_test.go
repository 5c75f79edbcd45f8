package sqlite

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// childDBEnv names the database a child process of TestWatchSeesOtherProcess
// commits to.
const childDBEnv = "RATH_SQLITE_TEST_CHILD_DB"

// TestChildCommit is the child: run by TestWatchSeesOtherProcess (and
// skipped otherwise), it commits a two-chunk session, labels it, and
// prints its id, head and length.
func TestChildCommit(t *testing.T) {
	path := os.Getenv(childDBEnv)
	if path == "" {
		t.Skip("the child of TestWatchSeesOtherProcess")
	}
	st, err := Open(t.Context(), Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := session.FromUser("from another process")
	commit(t, st, s, "")
	s2 := s.Append(session.User("still from there"))
	commit(t, st, s2, s.Head())
	if err := st.SetLabel(t.Context(), s.ID(), "by", "child"); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("committed %s %s %d\n", s2.ID(), s2.Head(), s2.Len())
}

// A watcher sees the commits and label write of another process on the
// same file.
func TestWatchSeesOtherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	path := filepath.Join(t.TempDir(), "rath.db")
	a := openAt(t, path)
	events := watch(t, a)

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestChildCommit$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childDBEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	var want store.Event
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "committed" {
			n, _ := strconv.Atoi(f[3])
			want = store.Event{ID: session.ID(f[1]), Head: session.ChunkID(f[2]), Len: n}
		}
	}
	if want.ID == "" {
		t.Fatalf("the child printed no commit:\n%s", out)
	}
	first := next(t, events)
	if first.ID != want.ID || first.Len != 1 || first.Labels || first.Missed {
		t.Fatalf("first event %+v, want the child's first commit of %s", first, want.ID)
	}
	if ev := next(t, events); ev != want {
		t.Fatalf("second event %+v, want %+v", ev, want)
	}
	want.Labels = true
	if ev := next(t, events); ev != want {
		t.Fatalf("third event %+v, want %+v", ev, want)
	}
}
