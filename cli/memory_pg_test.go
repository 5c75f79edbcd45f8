package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/internal/pgtest"
)

// TestMemoryMovesToPostgresAndBack: a team moves a local memory into the
// shared PostgreSQL one and back with export and import; the entries and
// their provenance arrive unchanged, the shared memory recalls and explains
// them, and a rollback there is recorded like any other.
func TestMemoryMovesToPostgresAndBack(t *testing.T) {
	pg := pgtest.FreshDB(t, "rath_cli")
	home := memoryHome(t)
	sd := seedMemory(t, home)
	file := filepath.Join(t.TempDir(), "local.jsonl")
	rathOK(t, home, "memory", "export", "-o", file)

	if out := rathOK(t, home, "--memory", pg, "memory", "import", file); !strings.Contains(out, "3 new, 0 replaced, 0 unchanged") {
		t.Fatalf("import into PostgreSQL says %q", out)
	}
	want, _ := json.Marshal(listed(t, home))
	if got, _ := json.Marshal(listed(t, home, "--memory", pg)); !bytes.Equal(got, want) {
		t.Fatalf("in PostgreSQL:\n got %s\nwant %s", got, want)
	}
	// The shared memory explains the local run's recall from the same
	// session graph.
	out := rathOK(t, home, "--memory", pg, "--json", "memory", "explain", string(sd.run.ID()), cgoURI)
	if !strings.Contains(out, string(sd.writer.ID())) || !strings.Contains(out, string(sd.evidence)) {
		t.Fatalf("explain on PostgreSQL:\n%s", out)
	}

	back := filepath.Join(t.TempDir(), "pg.jsonl")
	rathOK(t, home, "--memory", pg, "memory", "export", "-o", back)
	home3 := filepath.Join(t.TempDir(), "home3")
	rathOK(t, home3, "memory", "import", back)
	if got, _ := json.Marshal(listed(t, home3)); !bytes.Equal(got, want) {
		t.Fatalf("back in a local memory:\n got %s\nwant %s", got, want)
	}

	out = rathOK(t, home, "--memory", pg, "memory", "forget", "--derived-from", string(sd.writer.ID()))
	if !strings.Contains(out, "forgot 2 entries") {
		t.Fatalf("rollback on PostgreSQL says %q", out)
	}
	if got := uris(listed(t, home, "--memory", pg)); got != notesURI {
		t.Fatalf("after the rollback PostgreSQL holds %s", got)
	}
}
