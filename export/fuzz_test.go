package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
)

// FuzzImport feeds Import arbitrary bytes: it must never panic, and a
// session it accepts must verify, in memory and in the store, and must not
// be its own ancestor.
func FuzzImport(f *testing.F) {
	small := session.FromUser("hi").Append(session.Assistant("hello", session.ToolCall{ID: "c1", Name: "echo", Args: []byte(`{"x":1}`)}),
		session.Result(session.ToolResult{CallID: "c1", Tool: "echo", Content: "1"}))
	for _, s := range []*session.Session{small} {
		for _, format := range []string{"jsonl", "openrath"} {
			var b bytes.Buffer
			if err := WriteSession(&b, s, format); err != nil {
				f.Fatal(err)
			}
			f.Add(b.Bytes())
		}
	}
	// Files written by OpenRath-Python, and one naming its own parent.
	golden, _ := filepath.Glob("../session/openrath/testdata/py/*.jsonl")
	for _, path := range golden {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"record_type":"header","schema_version":1,"id":"aaaaaaaa-0000-4000-8000-000000000001","parent_session_ids":["aaaaaaaa-0000-4000-8000-000000000001"]}` + "\n"))
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"record_type":"header"}` + "\n"))
	f.Add([]byte(`{"type":"header","format":"rath.session","schema_version":1}` + "\n"))
	f.Add([]byte("not json\n"))

	// Without fsync: the fuzzer commits thousands of sessions, and what is
	// checked (the hash chains) does not depend on durability.
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(f.TempDir(), "s.db"), Durability: store.Exit})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Import(ctx, st, bytes.NewReader(data))
		if err != nil {
			if s != nil {
				t.Fatalf("Import returned a session and an error: %v", err)
			}
			return
		}
		if err := s.Verify(); err != nil {
			t.Fatalf("imported session does not verify: %v", err)
		}
		if err := st.Verify(ctx, s.ID()); err != nil {
			t.Fatalf("stored session does not verify: %v", err)
		}
		anc, err := st.Ancestors(ctx, s.ID())
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(anc, s.ID()) {
			t.Fatalf("session %s is its own ancestor", s.ID())
		}
	})
}
