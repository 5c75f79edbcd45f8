package memorytest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"
)

// Environment of a child process of RunProcesses.
const (
	envURL  = "RATH_MEMORYTEST_URL"
	envProc = "RATH_MEMORYTEST_PROC"
)

// perProcess is how many entries each child writes.
const perProcess = 40

// RunProcesses has procs processes — this test binary run again, each
// running only the test named child, which must call Child — write to the
// memory at url at once, as the workers of a cluster do: each writes its
// own entries, replaces one shared entry, and writes then rolls back a run.
// Afterwards every process's entries are there and recalled, the shared
// entry holds one process's content whole, and nothing rolled back is left.
func RunProcesses(t *testing.T, url, child string, procs int) {
	t.Helper()
	cmds := make([]*exec.Cmd, procs)
	outs := make([]strings.Builder, procs)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), envURL+"="+url, envProc+"="+strconv.Itoa(i))
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i].String())
		}
		if !strings.Contains(outs[i].String(), "wrote as process") {
			t.Fatalf("process %d did not run %s:\n%s", i, child, outs[i].String())
		}
	}
	m, err := memory.Open(context.Background(), url, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i := range procs {
		es, err := m.List(ctx, fmt.Sprintf("memory://project/procs/p%d/", i))
		if err != nil || len(es) != perProcess {
			t.Fatalf("process %d: %d of its %d entries, %v", i, len(es), perProcess, err)
		}
	}
	hits, _, err := m.Recall(ctx, nil, memory.Query{Text: "kestrel", Scopes: []string{"project/procs"}, K: procs*perProcess + 10})
	if err != nil || len(hits) != procs*perProcess {
		t.Fatalf("recall found %d of %d, %v", len(hits), procs*perProcess, err)
	}
	shared, err := m.Get(ctx, memory.MustParseURI("memory://project/procs/shared"))
	var k int
	if err != nil || func() bool { _, e := fmt.Sscanf(shared.Content, "written by process %d", &k); return e != nil }() || k < 0 || k >= procs {
		t.Fatalf("the shared entry: %+v, %v", shared, err)
	}
	if left, err := m.List(ctx, "memory://project/rolled/"); err != nil || len(left) != 0 {
		t.Fatalf("%d rolled-back entries left, %v", len(left), err)
	}
}

// Child is the body of a RunProcesses child: in any other run of the test
// binary it returns false at once and the calling test should return.
func Child(t *testing.T) bool {
	url, proc := os.Getenv(envURL), os.Getenv(envProc)
	if url == "" {
		return false
	}
	m, err := memory.Open(context.Background(), url, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := session.FromUser("process " + proc)
	for j := range perProcess {
		if s, err = m.Remember(ctx, s, memory.Entry{URI: memory.MustParseURI(fmt.Sprintf("memory://project/procs/p%s/%d", proc, j)),
			Content: fmt.Sprintf("kestrel note %d of process %s", j, proc)}); err != nil {
			t.Fatal(err)
		}
		if j%8 == 0 {
			if _, err := m.Remember(ctx, nil, memory.Entry{URI: memory.MustParseURI("memory://project/procs/shared"),
				Content: "written by process " + proc}); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := session.FromUser("a run of process " + proc + " to roll back")
	r := run
	for j := range 10 {
		if r, err = m.Remember(ctx, r, memory.Entry{URI: memory.MustParseURI(fmt.Sprintf("memory://project/rolled/p%s-%d", proc, j)),
			Content: "rolled back"}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _, err := m.Forget(ctx, r, memory.DerivedFrom(run.ID())); err != nil || n != 10 {
		t.Fatalf("rollback forgot %d, %v", n, err)
	}
	fmt.Println("wrote as process", proc)
	return true
}
