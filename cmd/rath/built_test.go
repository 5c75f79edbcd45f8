package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The rath binary the tests that start processes run (TestInterruptedRuns,
// TestInterruptMatrix): built once per test binary, without the race
// detector, and removed when the tests end (TestMain).
var rathBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// rathBinary builds rath once and returns its path.
func rathBinary(t *testing.T) string {
	t.Helper()
	b := &rathBuild
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "rath-bin-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "rath")
		b.out, b.err = exec.Command("go", "build", "-o", b.bin, "github.com/openrath/rath/cmd/rath").CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build: %v\n%s", b.err, b.out)
	}
	return b.bin
}

// removeRathBinary removes what rathBinary built.
func removeRathBinary() {
	if rathBuild.dir != "" {
		os.RemoveAll(rathBuild.dir)
	}
}

// cleanM runs the tests, then removes the built binary.
type cleanM struct{ m *testing.M }

func (c cleanM) Run() int {
	defer removeRathBinary()
	return c.m.Run()
}
