package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/session/openrath"
	"github.com/openrath/rath/store"
)

// goldenDir holds session files written by OpenRath-Python itself.
const goldenDir = "../session/openrath/testdata/py"

// golden returns the golden files by name (py_loop, …) and the session id
// each imports as, from the manifest.
func golden(t *testing.T) (files map[string][]byte, ids map[string]session.ID) {
	t.Helper()
	var manifest map[string]struct {
		ID string `json:"id"`
	}
	b, err := os.ReadFile(filepath.Join(goldenDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	files, ids = map[string][]byte{}, map[string]session.ID{}
	for name, m := range manifest {
		if files[name], err = os.ReadFile(filepath.Join(goldenDir, name+".jsonl")); err != nil {
			t.Fatal(err)
		}
		if ids[name], err = openrath.IDOf(m.ID); err != nil {
			t.Fatal(err)
		}
	}
	return files, ids
}

// familyEdges is the lineage the golden files record among themselves
// (py_branch_b's fork point and the loops' user and agent sessions were
// never written to files): parent -> child.
var familyEdges = [][2]string{
	{"py_loop", "py_fork_point"},
	{"py_fork_point", "py_branch_a"},
	{"py_branch_a", "py_merge"},
	{"py_branch_b", "py_merge"},
}

// TestImportOpenRathFamily imports the golden files in many orders, children
// before parents included: every order gives the same stored sessions, and
// the graph around the merge shows the family.
func TestImportOpenRathFamily(t *testing.T) {
	ctx := context.Background()
	files, ids := golden(t)
	names := slices.Sorted(maps.Keys(files))
	orders := [][]string{names, slices.Clone(names)}
	slices.Reverse(orders[1])
	for i := 1; i < len(names); i++ { // every rotation
		orders = append(orders, append(slices.Clone(names[i:]), names[:i]...))
	}
	orders = append(orders, []string{"py_merge", "py_branch_b", "py_create", "py_branch_a", "py_fork_point", "py_loop"})

	var first map[string]store.Info
	for _, order := range orders {
		st := openStore(t)
		for _, name := range order {
			s, err := Import(ctx, st, bytes.NewReader(files[name]))
			if err != nil {
				t.Fatalf("order %v: import %s: %v", order, name, err)
			}
			if s.ID() != ids[name] {
				t.Fatalf("%s imported as %s, want %s", name, s.ID(), ids[name])
			}
		}
		infos := map[string]store.Info{}
		for name, id := range ids {
			in, err := st.Info(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			infos[name] = in
		}
		if first == nil {
			first = infos
			checkFamilyGraph(t, st, ids)
			continue
		}
		for name, in := range infos {
			a, b := first[name], in
			if a.Head != b.Head || a.Len != b.Len || !sameLineage(a.Lineage, b.Lineage) || !maps.Equal(a.Lineage.Extras, b.Lineage.Extras) {
				t.Errorf("order %v: %s stored as %+v, first order gave %+v", order, name, b, a)
			}
		}
		checkFamilyGraph(t, st, ids)
	}
}

// checkFamilyGraph checks the graph around the merge and around the loop.
func checkFamilyGraph(t *testing.T, st store.Store, ids map[string]session.ID) {
	t.Helper()
	ctx := context.Background()
	want := map[Edge]bool{}
	for _, e := range familyEdges {
		want[Edge{From: ids[e[0]], To: ids[e[1]], Op: openrath.ImportOp}] = true
	}
	for _, root := range []string{"py_merge", "py_loop"} {
		g, err := LoadGraph(ctx, st, ids[root])
		if err != nil {
			t.Fatal(err)
		}
		got := map[Edge]bool{}
		for _, e := range g.Edges {
			got[e] = true
		}
		if !maps.Equal(got, want) {
			t.Errorf("graph of %s: edges %v, want %v", root, g.Edges, familyEdges)
		}
		if len(g.Nodes) != 5 {
			t.Errorf("graph of %s: %d nodes, want the five of the family", root, len(g.Nodes))
		}
	}
}

// TestImportOpenRathAgain: importing a file again, or the partial file of
// the same run before or after the closed one, is the same session.
func TestImportOpenRathAgain(t *testing.T) {
	ctx := context.Background()
	files, ids := golden(t)
	full := files["py_branch_a"]
	lines := strings.SplitAfter(string(full), "\n")
	partial := []byte(strings.Join(lines[:6], ""))

	for _, order := range [][][]byte{{full, full, partial}, {partial, full, full}} {
		st := openStore(t)
		for i, data := range order {
			if _, err := Import(ctx, st, bytes.NewReader(data)); err != nil {
				t.Fatalf("import %d: %v", i, err)
			}
		}
		in, err := st.Info(ctx, ids["py_branch_a"])
		if err != nil {
			t.Fatal(err)
		}
		s, err := st.Load(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if in.Status != store.StatusClosed {
			t.Errorf("the closed run is stored %s", in.Status)
		}
		// Stored is the closed run: exporting it writes the trailer.
		var out bytes.Buffer
		if err := WriteSession(&out, s, FormatOpenRath); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(out.Bytes(), []byte(`"record_type":"trailer"`)) {
			t.Errorf("stored session exports without trailer:\n%s", out.Bytes())
		}
		if n, err := st.Count(ctx, store.Filter{}); err != nil || n != 1 {
			t.Errorf("store holds %d sessions (%v), want 1", n, err)
		}
	}
}

// TestImportOpenRathCrashedStaysOpen: a file without a trailer (its run
// crashed or is still being written) is stored open; the closed file of
// the same run, imported after it, closes it.
func TestImportOpenRathCrashedStaysOpen(t *testing.T) {
	ctx := context.Background()
	files, ids := golden(t)
	lines := strings.SplitAfter(string(files["py_loop"]), "\n")
	st := openStore(t)
	status := func() store.Status {
		in, err := st.Info(ctx, ids["py_loop"])
		if err != nil {
			t.Fatal(err)
		}
		return in.Status
	}
	if _, err := Import(ctx, st, strings.NewReader(strings.Join(lines[:4], ""))); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != store.StatusOpen {
		t.Fatalf("a crashed run's file is stored %s", got)
	}
	if _, err := Import(ctx, st, bytes.NewReader(files["py_loop"])); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != store.StatusClosed {
		t.Fatalf("after its closed file, the run is %s", got)
	}
}

// pyFile is a minimal OpenRath session file with this id and parents.
func pyFile(id string, parents ...string) []byte {
	p, _ := json.Marshal(append([]string{}, parents...))
	return []byte(`{"record_type": "header", "schema_version": 1, "id": "` + id + `", "created_at": "2026-11-24T12:00:00+00:00", "parent_session_ids": ` + string(p) + `, "lineage_operator": "Session.fork", "lineage_kind": "op_fork", "lineage_extras": [], "sandbox_backend": null, "sandbox_spec": null, "sandbox_handle_id": null}
{"record_type": "chunk", "index": 0, "kind": "user", "payload": {"content": "hi"}}
{"record_type": "trailer", "closed_at": "2026-11-24T12:00:01+00:00", "final_chunk_count": 1, "cumulative_usage": null}
`)
}

// TestImportOpenRathCycle: a file whose parents name itself, or whose
// parents descend from it through sessions already stored, is refused with
// one error wrapping openrath.ErrCycle, and nothing is stored.
func TestImportOpenRathCycle(t *testing.T) {
	const (
		a = "aaaaaaaa-0000-4000-8000-000000000001"
		b = "bbbbbbbb-0000-4000-8000-000000000002"
		c = "cccccccc-0000-4000-8000-000000000003"
	)
	for _, tc := range []struct {
		name   string
		stored [][]byte
		file   []byte
	}{
		{"itself", nil, pyFile(a, b, a)},
		{"two", [][]byte{pyFile(a, b)}, pyFile(b, a)},
		{"three", [][]byte{pyFile(a, b), pyFile(b, c)}, pyFile(c, a)},
		{"three, stored the other way", [][]byte{pyFile(b, c), pyFile(a, b)}, pyFile(c, a)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t)
			for _, f := range tc.stored {
				if _, err := Import(ctx, st, bytes.NewReader(f)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Import(ctx, st, bytes.NewReader(tc.file))
			if !errors.Is(err, openrath.ErrCycle) || !errors.Is(err, ErrImport) {
				t.Fatalf("err = %v, want ErrImport wrapping openrath.ErrCycle", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if n, _ := st.Count(ctx, store.Filter{}); n != len(tc.stored) {
				t.Errorf("store holds %d sessions, want %d", n, len(tc.stored))
			}
		})
	}
}

// TestImportCycleOurs: a session in our own format is checked the same way.
func TestImportCycleOurs(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	fork := func(id session.ID, parents ...session.ID) *session.Session {
		s, err := session.Assemble(id, session.Lineage{Parents: parents, Op: "fork", Kind: session.LineageFork}, []session.Chunk{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Append(session.User("hi"))
	}
	z := session.NewID()
	y := fork(session.NewID(), z) // z is not stored yet
	commit(t, st, y, "")
	for name, s := range map[string]*session.Session{
		"itself":         fork(z, z),
		"through stored": fork(z, y.ID()),
	} {
		_, err := Import(ctx, st, bytes.NewReader(encode(t, s, FormatJSONL)))
		if !errors.Is(err, openrath.ErrCycle) || !errors.Is(err, ErrImport) {
			t.Errorf("%s: err = %v, want ErrImport wrapping openrath.ErrCycle", name, err)
		}
	}
	if _, err := Import(ctx, st, bytes.NewReader(encode(t, fork(z), FormatJSONL))); err != nil {
		t.Errorf("the parent, without a loop: %v", err)
	}
}

// TestImportOwnExport: a session exported as an OpenRath file and imported
// back is the same session: into the store that holds it, nothing changes;
// into another, it arrives under the same id and can be forked.
func TestImportOwnExport(t *testing.T) {
	ctx := context.Background()
	s := richSession()
	data := encode(t, s, FormatOpenRath)

	st := openStore(t)
	commit(t, st, s, "")
	got, err := Import(ctx, st, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("import of its own export: %v", err)
	}
	if got.ID() != s.ID() || got.Head() != s.Head() {
		t.Errorf("import gave %s at %s, want the stored %s at %s", got.ID(), got.Head().Short(), s.ID(), s.Head().Short())
	}
	// A file that says something else under that id conflicts.
	edited := bytes.Replace(data, []byte("Fix the failing test"), []byte("Break the passing test"), 1)
	if _, err := Import(ctx, st, bytes.NewReader(edited)); !errors.Is(err, store.ErrConflict) || !errors.Is(err, ErrImport) {
		t.Errorf("edited export: err = %v, want ErrConflict", err)
	}

	other := openStore(t)
	imp, err := Import(ctx, other, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if imp.ID() != s.ID() {
		t.Errorf("imported as %s, want %s", imp.ID(), s.ID())
	}
	f := imp.Fork().Append(session.User("carry on"))
	commit(t, other, f, "")
	if ps, err := other.Parents(ctx, f.ID()); err != nil || !slices.Equal(ps, []session.ID{s.ID()}) {
		t.Errorf("fork's parents %v (%v), want [%s]", ps, err, s.ID())
	}
	// The fork exported names the original's UUID as its parent.
	var out bytes.Buffer
	if err := WriteSession(&out, f, FormatOpenRath); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte(`"parent_session_ids":["`+openrath.UUIDOf(s.ID())+`"]`)) {
		t.Errorf("fork's export does not name its parent:\n%s", strings.SplitN(out.String(), "\n", 2)[0])
	}
}
