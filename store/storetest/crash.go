package storetest

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// The crash test: a child process commits in a loop and reports every commit
// the store acknowledged; the parent kills it with SIGKILL at a random moment,
// reopens the store, and checks that every acknowledged commit is there, that
// every stored session verifies, and that no half-written session is visible.
// It repeats this kills times against the same store.
//
// A backend's tests wire it up with two functions:
//
//	func TestCrash(t *testing.T)      { storetest.Crash(t, url, 30) }
//	func TestCrashChild(t *testing.T) { storetest.CrashChild(t) }

const (
	envCrashURL     = "RATH_STORETEST_CRASH_URL"
	envCrashSession = "RATH_STORETEST_CRASH_SESSION"
)

// Crash runs the parent side of the crash test against the store at url.
// The test binary must contain a TestCrashChild that calls CrashChild.
func Crash(t *testing.T, url string, kills int) {
	main := session.FromSystem("crash test")
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	acked := map[session.ID]ack{}
	for round := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
		cmd.Env = append(os.Environ(), envCrashURL+"="+url, envCrashSession+"="+string(main.ID()))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Kill after a random number of acknowledged commits, mid-flight.
		target := 1 + r.IntN(40)
		seen := 0
		deadline := time.After(30 * time.Second)
	wait:
		for seen < target {
			select {
			case l, ok := <-lines:
				if !ok {
					break wait
				}
				if a, ok := parseAck(l); ok {
					acked[a.id] = a
					seen++
				}
			case <-deadline:
				t.Fatalf("round %d: the child made only %d commits in 30s", round, seen)
			}
		}
		time.Sleep(time.Duration(r.IntN(3000)) * time.Microsecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		for l := range lines { // acks printed before the kill still count
			if a, ok := parseAck(l); ok {
				acked[a.id] = a
			}
		}
		_ = cmd.Wait()
		checkAfterCrash(t, url, acked, round)
	}
	if len(acked) == 0 {
		t.Fatal("no commit was acknowledged")
	}
}

type ack struct {
	id   session.ID
	head session.ChunkID
	n    int
}

func parseAck(line string) (ack, bool) {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "ACK" {
		return ack{}, false
	}
	n, err := strconv.Atoi(f[3])
	return ack{session.ID(f[1]), session.ChunkID(f[2]), n}, err == nil
}

func checkAfterCrash(t *testing.T, url string, acked map[session.ID]ack, round int) {
	t.Helper()
	st, err := store.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
	}
	defer st.Close()
	for _, a := range acked {
		s, err := st.Load(t.Context(), a.id)
		if err != nil {
			t.Fatalf("round %d: acknowledged session %s: %v", round, a.id, err)
		}
		if s.Len() < a.n || s.Chunk(a.n-1).ID != a.head {
			t.Fatalf("round %d: session %s lost acknowledged commit %d (%s): stored %d chunks", round, a.id, a.n, a.head.Short(), s.Len())
		}
	}
	all, err := st.List(t.Context(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range all {
		if err := st.Verify(t.Context(), info.ID); err != nil {
			t.Fatalf("round %d: after SIGKILL: %v", round, err)
		}
	}
}

// CrashChild is the child side: it commits until killed. It skips unless
// started by Crash.
func CrashChild(t *testing.T) {
	url, id := os.Getenv(envCrashURL), os.Getenv(envCrashSession)
	if url == "" {
		t.Skip("runs only as the child process of the crash test")
	}
	st, err := store.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := st.Load(t.Context(), session.ID(id))
	if err != nil {
		// First round: the session does not exist yet. Give it the id the
		// parent chose, so every round extends the same session.
		cur, err = session.Assemble(session.ID(id), session.Lineage{Op: "crash", Kind: session.LineageLeaf}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		next := cur.Append(session.Note(fmt.Sprintf("commit %d", i)), session.User(strings.Repeat("x", i%700)))
		if err := st.Commit(t.Context(), next, cur.Head()); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "ACK %s %s %d\n", next.ID(), next.Head(), next.Len())
		if i%7 == 3 { // forks share the prefix: exercise those writes too
			f := next.Fork().Append(session.User("fork"))
			if err := st.Commit(t.Context(), f, ""); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(w, "ACK %s %s %d\n", f.ID(), f.Head(), f.Len())
		}
		w.Flush()
		cur = next
	}
}
