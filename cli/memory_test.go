package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/local"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// rathIn runs the command line on home with stdin, returning the exit code
// and what it printed.
func rathIn(t *testing.T, home, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"--home", home}, args...), strings.NewReader(stdin), &out, &errb)
	if strings.Contains(errb.String(), "goroutine ") {
		t.Fatalf("rath %v panicked:\n%s", args, errb.String())
	}
	return code, out.String(), errb.String()
}

// rathOK runs the command line and fails the test unless it exits 0.
func rathOK(t *testing.T, home string, args ...string) string {
	t.Helper()
	code, out, errs := rathIn(t, home, "", args...)
	if code != 0 {
		t.Fatalf("rath %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errs)
	}
	return out
}

// memoryHome is a fresh home on the default local memory, its environment
// cleared of an outside RATH_HOME or RATH_MEMORY.
func memoryHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home) // the runtime sets it; restore it after
	t.Setenv("RATH_MEMORY", "")
	return home
}

// seeded is what seedMemory wrote.
type seeded struct {
	writer, run *session.Session // the writer's and the recalling run's sessions, both stored
	stranger    session.ID       // the writer of an entry whose session is in no store
	evidence    session.ChunkID  // the writer's user chunk, cited by its entries
}

const (
	cgoURI   = "memory://project/rath/build/cgo"
	styleURI = "memory://project/rath/style/errors"
	notesURI = "memory://user/ann/notes/café"
)

// seedMemory writes three entries into home's memory: two by a stored
// writer session and one, with unicode and line breaks, by a session no
// store holds; then a run recalls the build entry. Both sessions are
// committed to home's store.
func seedMemory(t *testing.T, home string) seeded {
	t.Helper()
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	m, err := rt.Memory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sd seeded
	w := session.FromUser("the build needs CGO_ENABLED=0; errors are wrapped with %w")
	sd.evidence = w.Head()
	prov := memory.Provenance{Evidence: []session.ChunkID{sd.evidence}, Agent: "coder", Kind: memory.EvidenceHuman}
	if w, err = m.Remember(ctx, w, memory.Entry{URI: memory.MustParseURI(cgoURI), Content: "Build with CGO_ENABLED=0.", Provenance: prov}); err != nil {
		t.Fatal(err)
	}
	if w, err = m.Remember(ctx, w, memory.Entry{URI: memory.MustParseURI(styleURI), Content: "Wrap errors with %w and a sentinel.", Provenance: prov}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Store.Commit(ctx, w, ""); err != nil {
		t.Fatal(err)
	}
	sd.writer, sd.stranger = w, session.NewID()
	elsewhere := session.FromUser("ann prefers tea").Head()
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: memory.MustParseURI(notesURI), Content: "Ann prefers tea ☕\nnot coffee, \"ever\".",
		Provenance: memory.Provenance{Session: sd.stranger, Evidence: []session.ChunkID{elsewhere}, Kind: memory.EvidenceToolResult,
			Time: time.Date(2025, 3, 4, 5, 6, 7, 890, time.UTC)}}); err != nil {
		t.Fatal(err)
	}
	run := session.FromUser("how do I build?")
	hits, run, err := m.Recall(ctx, run, memory.Query{Text: "build CGO_ENABLED", Scopes: []string{"project/rath", "user/ann"}, K: 5})
	if err != nil || len(hits) == 0 || hits[0].URI.String() != cgoURI {
		t.Fatalf("recall: %v, %v", hits, err)
	}
	if _, run, err = m.Recall(ctx, run, memory.Query{Text: "tea", Scopes: []string{"user/ann"}, K: 5}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Store.Commit(ctx, run, ""); err != nil {
		t.Fatal(err)
	}
	sd.run = run
	return sd
}

// listed is `rath memory ls --json` on home.
func listed(t *testing.T, home string, args ...string) []entryJSON {
	t.Helper()
	var es []entryJSON
	out := rathOK(t, home, append([]string{"--json", "memory", "ls"}, args...)...)
	if err := json.Unmarshal([]byte(out), &es); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, out)
	}
	return es
}

func uris(es []entryJSON) string {
	var out []string
	for _, e := range es {
		out = append(out, e.URI)
	}
	return strings.Join(out, " ")
}

func TestMemoryLsAndShow(t *testing.T) {
	home := memoryHome(t)
	sd := seedMemory(t, home)

	out := rathOK(t, home, "memory", "ls")
	for _, want := range []string{"URI", cgoURI, "Build with CGO_ENABLED=0.", string(sd.writer.ID()), "human_correction", notesURI, "Ann prefers tea ☕ not coffee"} {
		if !strings.Contains(out, want) {
			t.Errorf("ls does not show %q:\n%s", want, out)
		}
	}
	if got := uris(listed(t, home, "project/rath/build/")); got != cgoURI {
		t.Errorf("ls project/rath/build/ = %q, want the build entry alone", got)
	}
	all := listed(t, home)
	if got := uris(all); got != cgoURI+" "+styleURI+" "+notesURI {
		t.Fatalf("ls --json = %q", got)
	}
	if p := all[0].Provenance; p.Session != sd.writer.ID() || p.Agent != "coder" || len(p.Evidence) != 1 || p.Evidence[0] != sd.evidence || p.Time.IsZero() {
		t.Errorf("ls --json provenance %+v", p)
	}
	if all[2].Content != "Ann prefers tea ☕\nnot coffee, \"ever\"." || all[2].Hash != memory.Hash(all[2].Content) {
		t.Errorf("ls --json entry %+v", all[2])
	}

	// --memory names another memory: empty.
	other := "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "other.db"))
	if got := listed(t, home, "--memory", other); len(got) != 0 {
		t.Errorf("--memory %s lists %q, want nothing", other, uris(got))
	}

	out = rathOK(t, home, "memory", "show", notesURI)
	for _, want := range []string{"uri       " + notesURI, "session   " + string(sd.stranger), "kind      tool_result", "evidence  sha256:",
		"hash      " + memory.Hash("Ann prefers tea ☕\nnot coffee, \"ever\"."), "\nAnn prefers tea ☕\nnot coffee, \"ever\".\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("show does not print %q:\n%s", want, out)
		}
	}
	var shown entryJSON
	if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "memory", "show", "project/rath/build/cgo")), &shown); err != nil ||
		shown.URI != cgoURI || shown.Provenance.Evidence[0] != sd.evidence {
		t.Errorf("show --json (memory:// left out) = %+v, %v", shown, err)
	}

	code, _, errs := rathIn(t, home, "", "memory", "show", "memory://project/rath/nothing/here")
	if code != 1 || !strings.Contains(errs, "no memory entry at memory://project/rath/nothing/here") {
		t.Errorf("show of an unknown URI: exit %d, %q", code, errs)
	}
	code, _, errs = rathIn(t, home, "", "memory", "show", "memory://nowhere/x/y")
	if code != 2 || !strings.Contains(errs, "bad URI") {
		t.Errorf("show of a bad URI: exit %d, %q", code, errs)
	}
}

func TestMemoryExportImportRoundTrip(t *testing.T) {
	home := memoryHome(t)
	seedMemory(t, home)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	if out := rathOK(t, home, "memory", "export", "-o", file); !strings.Contains(out, "exported 3 entries to "+file) {
		t.Errorf("export says %q", out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.NewDecoder(bytes.NewReader(data)).Header()
	if err != nil || !strings.Contains(h.Source, "memory.db") {
		t.Errorf("export header %+v, %v: want the source memory described", h, err)
	}
	stdout := rathOK(t, home, "memory", "export")
	if _, a, _ := strings.Cut(stdout, "\n"); !strings.HasSuffix(string(data), a) || a == "" {
		t.Errorf("export to stdout differs from the file after the header:\n%s\n---\n%s", stdout, data)
	}
	if out := rathOK(t, home, "memory", "export", "project/rath/style/"); strings.Count(out, "\n") != 2 || !strings.Contains(out, styleURI) {
		t.Errorf("export of a prefix:\n%s", out)
	}

	// An existing file is refused and left as it was.
	code, _, errs := rathIn(t, home, "", "memory", "export", "-o", file)
	if again, _ := os.ReadFile(file); code != 1 || !strings.Contains(errs, "already exists") || !bytes.Equal(again, data) {
		t.Errorf("export over an existing file: exit %d, %q", code, errs)
	}

	// Into a second home: provenance identical.
	home2 := filepath.Join(t.TempDir(), "home2")
	if out := rathOK(t, home2, "memory", "import", file); !strings.Contains(out, "imported 3 entries") || !strings.Contains(out, "3 new, 0 replaced, 0 unchanged") {
		t.Errorf("import says %q", out)
	}
	want, _ := json.Marshal(listed(t, home))
	got, _ := json.Marshal(listed(t, home2))
	if !bytes.Equal(got, want) {
		t.Fatalf("imported entries differ:\n got %s\nwant %s", got, want)
	}

	// Again, from stdin: idempotent.
	code, out, errs := rathIn(t, home2, string(data), "--json", "memory", "import", "-")
	var counts map[string]int
	if code != 0 || json.Unmarshal([]byte(out), &counts) != nil || counts["unchanged"] != 3 || counts["new"] != 0 || counts["replaced"] != 0 {
		t.Fatalf("re-import: exit %d, %s %s", code, out, errs)
	}
	if again, _ := json.Marshal(listed(t, home2)); !bytes.Equal(again, want) {
		t.Fatalf("re-import changed the entries:\n%s", again)
	}

	// A changed entry is replaced, keeping the file's provenance.
	edited := strings.Replace(string(data), "Build with CGO_ENABLED=0.", "Build with CGO_ENABLED=1.", 1)
	if code, out, errs := rathIn(t, home2, edited, "memory", "import", "-"); code != 0 || !strings.Contains(out, "0 new, 1 replaced, 2 unchanged") {
		t.Fatalf("import of an edited file: exit %d, %s %s", code, out, errs)
	}
	if es := listed(t, home2); es[0].Content != "Build with CGO_ENABLED=1." || !es[0].Provenance.Time.Equal(listed(t, home)[0].Provenance.Time) {
		t.Errorf("replaced entry %+v", es[0])
	}
}

func TestMemoryImportRefusesBadInput(t *testing.T) {
	home := memoryHome(t)
	seedMemory(t, home)
	good := rathOK(t, home, "memory", "export")
	lines := strings.SplitAfter(good, "\n")
	home2 := filepath.Join(t.TempDir(), "home2")
	dir := t.TempDir()
	for _, c := range []struct {
		name, in, want string
	}{
		{"corrupt third line", lines[0] + lines[1] + `{"uri":"memory://project/rath/x","content":` + "\n" + lines[3], "line 3: not JSON"},
		{"bad line at the end", good + `{"uri":"memory://project/rath/x","content":"x","provenance":{},"extra":1}` + "\n", `line 5: unknown field "extra"`},
		{"repeated URI", good + lines[1], "line 5: " + cgoURI + " is already on line 2"},
		{"newer version", `{"format":"rath-memory","version":9}` + "\n" + lines[1], "line 1: version 9 is newer"},
		{"no header", lines[1], "line 1: no header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".jsonl")
			if err := os.WriteFile(file, []byte(c.in), 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, errs := rathIn(t, home2, "", "memory", "import", file)
			if code != 1 || !strings.Contains(errs, "import "+file) || !strings.Contains(errs, c.want) || !strings.Contains(errs, "nothing was written") {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", code, errs, c.want)
			}
			if strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("the error is not one line: %q", errs)
			}
			if es := listed(t, home2); len(es) != 0 {
				t.Fatalf("a refused import wrote %s", uris(es))
			}
		})
	}
	code, _, errs := rathIn(t, home2, "", "memory", "import", filepath.Join(dir, "missing.jsonl"))
	if code != 1 || !strings.Contains(errs, "missing.jsonl") {
		t.Errorf("import of a missing file: exit %d, %q", code, errs)
	}
}

func TestMemoryExplain(t *testing.T) {
	home := memoryHome(t)
	sd := seedMemory(t, home)

	var x explainJSON
	out := rathOK(t, home, "--json", "memory", "explain", string(sd.run.ID()), cgoURI)
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if x.URI != cgoURI || x.Session != sd.run.ID() || len(x.Recalls) != 1 || x.Recalls[0].Index != 1 || x.Recalls[0].Query != "build CGO_ENABLED" ||
		x.Recalls[0].Hash != memory.Hash("Build with CGO_ENABLED=0.") {
		t.Fatalf("explain recalls: %s", out)
	}
	if len(x.Writes) != 1 {
		t.Fatalf("explain writes: %s", out)
	}
	w := x.Writes[0]
	if w.Writer != sd.writer.ID() || !w.WriterInStore || w.Op != session.MemoryRemember || w.Chunk != sd.writer.Chunk(1).ID ||
		len(w.Evidence) != 1 || w.Evidence[0].ID != sd.evidence || len(w.Missing) != 0 || w.Forgotten || w.Kind != memory.EvidenceHuman {
		t.Fatalf("explain write: %s", out)
	}
	if !x.Now.InMemory || x.Now.Hash != memory.Hash("Build with CGO_ENABLED=0.") || x.Now.Writer != sd.writer.ID() {
		t.Fatalf("explain now: %s", out)
	}

	out = rathOK(t, home, "memory", "explain", string(sd.run.ID()), cgoURI)
	for _, want := range []string{cgoURI + " in session " + string(sd.run.ID()), "recalled 1 time", `query "build CGO_ENABLED"`,
		"written by session " + string(sd.writer.ID()) + " (remember", "resolved  " + sd.evidence.Short(), "the build needs CGO_ENABLED=0",
		"now in memory: content " + strings.TrimPrefix(memory.Hash("Build with CGO_ENABLED=0."), "sha256:")[:12]} {
		if !strings.Contains(out, want) {
			t.Errorf("explain does not print %q:\n%s", want, out)
		}
	}

	// The tea entry's writer is in no store: explained, its evidence missing.
	out = rathOK(t, home, "--json", "memory", "explain", string(sd.run.ID()), notesURI)
	x = explainJSON{}
	if err := json.Unmarshal([]byte(out), &x); err != nil || len(x.Writes) != 1 || x.Writes[0].Writer != sd.stranger || x.Writes[0].WriterInStore ||
		len(x.Writes[0].Missing) != 1 || len(x.Writes[0].Evidence) != 0 {
		t.Fatalf("explain of an entry from another store: %v\n%s", err, out)
	}
	if out := rathOK(t, home, "memory", "explain", string(sd.run.ID()), notesURI); !strings.Contains(out, "(not in this store)") || !strings.Contains(out, "missing") {
		t.Errorf("explain of an entry from another store:\n%s", out)
	}

	code, _, errs := rathIn(t, home, "", "memory", "explain", string(sd.run.ID()), styleURI)
	if code != 1 || !strings.Contains(errs, "neither recalled nor wrote") {
		t.Errorf("explain of an entry the run never saw: exit %d, %q", code, errs)
	}
	code, _, errs = rathIn(t, home, "", "memory", "explain", "nope", cgoURI)
	if code != 2 || !strings.Contains(errs, "not a session id") {
		t.Errorf("explain of a bad session id: exit %d, %q", code, errs)
	}
}

func TestMemoryForget(t *testing.T) {
	home := memoryHome(t)
	sd := seedMemory(t, home)

	// Usage: exactly one selector.
	for _, args := range [][]string{
		{"memory", "forget"},
		{"memory", "forget", cgoURI, "--prefix", "memory://project/"},
		{"memory", "forget", "--prefix", "memory://project/", "--derived-from", string(sd.writer.ID())},
		{"memory", "forget", "--derived-from", "not-a-session"},
		{"memory", "forget", "--prefix", ""},
		{"memory", "forget", "memory://nowhere/x/y"},
	} {
		if code, _, errs := rathIn(t, home, "", args...); code != 2 {
			t.Errorf("rath %v: exit %d, want 2 (%s)", args, code, errs)
		}
	}
	if got := listed(t, home); len(got) != 3 {
		t.Fatalf("a refused forget forgot something: %s", uris(got))
	}

	// An unknown session is a selector that matches nothing.
	nobody := session.NewID()
	out := rathOK(t, home, "memory", "forget", "--derived-from", string(nobody))
	if !strings.Contains(out, "forgot 0 entries: nothing matched derived_from="+string(nobody)) {
		t.Errorf("forget of an unknown session says %q", out)
	}

	// Roll the writer back.
	var res struct {
		Forgotten int        `json:"forgotten"`
		URIs      []string   `json:"uris"`
		Session   session.ID `json:"session"`
	}
	out = rathOK(t, home, "--json", "memory", "forget", "--derived-from", string(sd.writer.ID()))
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Forgotten != 2 || strings.Join(res.URIs, " ") != cgoURI+" "+styleURI {
		t.Fatalf("forget --derived-from: %v\n%s", err, out)
	}
	if got := uris(listed(t, home)); got != notesURI {
		t.Fatalf("after the rollback ls = %q, want the tea entry alone", got)
	}
	// Explain still finds the write in the session graph, and says the
	// entry is gone.
	var x explainJSON
	out = rathOK(t, home, "--json", "memory", "explain", string(sd.run.ID()), cgoURI)
	if err := json.Unmarshal([]byte(out), &x); err != nil || len(x.Writes) != 1 || x.Writes[0].Chunk == "" || x.Now.InMemory {
		t.Fatalf("explain after the rollback: %v\n%s", err, out)
	}
	if out := rathOK(t, home, "memory", "explain", string(sd.run.ID()), cgoURI); !strings.Contains(out, "now not in memory") {
		t.Errorf("explain after the rollback:\n%s", out)
	}

	// The forget is recorded in a stored session.
	rt, err := rath.Open(context.Background(), rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	rec, err := rt.Store.Load(context.Background(), res.Session)
	if err != nil {
		t.Fatalf("the recorded session %s: %v", res.Session, err)
	}
	if rec.Len() != 2 || rec.Chunk(0).User == nil || rec.Chunk(0).User.Text != "rath memory forget --derived-from "+string(sd.writer.ID()) {
		t.Fatalf("recorded session %+v", rec.Chunks())
	}
	m := rec.Chunk(1).Memory
	if m == nil || m.Op != session.MemoryForget || m.Count != 2 || m.Selector != "derived_from="+string(sd.writer.ID()) ||
		strings.Join(m.Forgotten, " ") != cgoURI+" "+styleURI {
		t.Fatalf("recorded forget chunk %+v", rec.Chunk(1))
	}
	info, err := rt.Store.Info(context.Background(), res.Session)
	if err != nil || info.Labels["rath.command"] != "memory forget" {
		t.Errorf("recorded session info %+v, %v", info, err)
	}
	ids, err := rt.Store.List(context.Background(), store.Filter{Labels: map[string]string{"rath.command": "memory forget"}})
	if err != nil || len(ids) != 2 {
		t.Errorf("forget sessions by label: %d, %v; want the two forgets", len(ids), err)
	}
	rt.Close()

	// One URI, given without memory://.
	out = rathOK(t, home, "memory", "forget", "user/ann/notes/café")
	if !strings.Contains(out, "forgot 1 entry (uri="+notesURI+")") || !strings.Contains(out, "  "+notesURI) {
		t.Errorf("forget URI says %q", out)
	}
	if got := listed(t, home); len(got) != 0 {
		t.Errorf("after forgetting everything ls = %q", uris(got))
	}
}

func TestConfigShowsMemory(t *testing.T) {
	home := memoryHome(t)
	abs, _ := filepath.Abs(home)
	if out := rathOK(t, home, "config"); !strings.Contains(out, "memory         sqlite://"+filepath.ToSlash(filepath.Join(abs, "memory.db"))+"\n") {
		t.Errorf("config:\n%s", out)
	}
	out := rathOK(t, home, "--memory", "postgres://ann:s3cret@db.example/rath?sslmode=disable", "--store", "postgres://ann:s3cret@db.example/rath", "config")
	if strings.Contains(out, "s3cret") || !strings.Contains(out, "memory         postgres://ann:xxxxx@db.example/rath?sslmode=disable") {
		t.Errorf("config with a password:\n%s", out)
	}
	t.Setenv("RATH_MEMORY", "postgres://db.example/mem?password=s3cret")
	var cfg map[string]any
	out = rathOK(t, home, "--json", "config")
	if err := json.Unmarshal([]byte(out), &cfg); err != nil || cfg["memory"] != "postgres://db.example/mem?password=xxxxx" || strings.Contains(out, "s3cret") {
		t.Errorf("config --json with RATH_MEMORY: %v\n%s", err, out)
	}

	// The config file's memory, below --memory and $RATH_MEMORY.
	t.Setenv("RATH_MEMORY", "")
	kept := "sqlite://" + filepath.ToSlash(filepath.Join(abs, "kept.db"))
	rathOK(t, home, "config", "set", "memory", kept)
	if out := rathOK(t, home, "config"); !strings.Contains(out, "memory         "+kept+"\n") {
		t.Errorf("config after config set memory:\n%s", out)
	}
	rathOK(t, home, "memory", "ls")
	if _, err := os.Stat(filepath.Join(abs, "kept.db")); err != nil {
		t.Errorf("the configured memory was not opened: %v", err)
	}
	if out := rathOK(t, home, "--memory", "sqlite:///elsewhere.db", "config"); !strings.Contains(out, "memory         sqlite:///elsewhere.db\n") {
		t.Errorf("--memory over the config file:\n%s", out)
	}
	if code, _, errs := rathIn(t, home, "", "config", "set", "memory", "redis://x"); code != 2 || !strings.Contains(errs, "postgres, postgresql, sqlite") {
		t.Errorf("config set memory redis://: exit %d, %s", code, errs)
	}
}

// TestMemoryExportFailureLeavesNoFile: an entry the export format refuses
// (an evidence id that is not a chunk id, which Remember refuses too, so
// it is put into the database under the backend) fails the export naming
// it, and leaves neither the file nor a temporary one, though entries
// before it were encoded.
func TestMemoryExportFailureLeavesNoFile(t *testing.T) {
	home := memoryHome(t)
	seedMemory(t, home)
	ctx := context.Background()
	b, err := local.OpenBackend(ctx, strings.TrimPrefix(rath.Config{Home: home}.Resolve().Memory, "sqlite://"))
	if err != nil {
		t.Fatal(err)
	}
	const bad = "memory://workflow/w/bad"
	err = b.Put(ctx, memory.Entry{URI: memory.MustParseURI(bad), Content: "x", Provenance: memory.Provenance{Evidence: []session.ChunkID{"c1"}}})
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	code, _, errs := rathIn(t, home, "", "memory", "export", "-o", file)
	if code != 1 || !strings.Contains(errs, "entry "+bad) || !strings.Contains(errs, `chunk id "c1"`) {
		t.Fatalf("export: exit %d, %q", code, errs)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("a failed export left %v", left)
	}
}
