package local

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/memorytest"
)

func TestConformance(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Memory {
		m, err := Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}

func TestPersistsAcrossRuns(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	ctx := context.Background()
	m, err := Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := memory.ParseURI("memory://project/p/kept")
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: u, Content: "kept across runs"}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	m2, err := Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	hits, _, err := m2.Recall(ctx, nil, memory.Query{Text: "kept", Scopes: []string{"project/p"}})
	if err != nil || len(hits) != 1 {
		t.Fatalf("after reopening: %+v, %v", hits, err)
	}
}
