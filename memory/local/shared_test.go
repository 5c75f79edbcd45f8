package local

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/memorytest"
	"github.com/openrath/rath/model/scripted"
)

// TestShared races two handles, each its own connections as two processes
// would have, on one database file.
func TestShared(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []Option
	}{{"lexical", nil}, {"hybrid", []Option{WithEmbedder(scripted.Hashed(64))}}} {
		t.Run(c.name, func(t *testing.T) {
			memorytest.RunShared(t, func(t *testing.T) (memory.Memory, memory.Memory) {
				path := filepath.Join(t.TempDir(), "m.db")
				var ms [2]memory.Memory
				for i := range ms {
					m, err := Open(context.Background(), path, c.opts...)
					if err != nil {
						t.Fatal(err)
					}
					ms[i] = m
				}
				return ms[0], ms[1]
			})
		})
	}
}

// TestProcesses: four processes write one memory file at once.
func TestProcesses(t *testing.T) {
	memorytest.RunProcesses(t, "sqlite://"+filepath.Join(t.TempDir(), "m.db"), "TestProcessesChild", 4)
}

// TestProcessesChild is TestProcesses's child process; alone it does
// nothing.
func TestProcessesChild(t *testing.T) { memorytest.Child(t) }
