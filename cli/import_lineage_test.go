package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/export"
	"github.com/openrath/rath/session/openrath"
)

// pyGolden holds session files written by OpenRath-Python itself.
const pyGolden = "../session/openrath/testdata/py"

// pyIDs maps each golden file's name to the UUID the original gave it.
func pyIDs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pyGolden, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name, e := range m {
		out[name] = e.ID
	}
	return out
}

// TestImportPythonFamily imports a fork/merge family of OpenRath-Python
// files, children first, then shows its graph, forks an imported session
// and exports it back.
func TestImportPythonFamily(t *testing.T) {
	home := t.TempDir()
	uuids := pyIDs(t)
	order := []string{"py_merge", "py_branch_b", "py_branch_a", "py_fork_point", "py_loop"}
	var paths []string
	for _, name := range order {
		paths = append(paths, filepath.Join(pyGolden, name+".jsonl"))
	}
	out := rathOK(t, home, append([]string{"import"}, paths...)...)
	ids := strings.Fields(out)
	if len(ids) != len(order) {
		t.Fatalf("import printed %q, want %d ids", out, len(order))
	}
	id := map[string]string{}
	for i, name := range order {
		want, err := openrath.IDOf(uuids[name])
		if err != nil {
			t.Fatal(err)
		}
		if ids[i] != string(want) {
			t.Errorf("%s imported as %s, want %s", name, ids[i], want)
		}
		id[name] = ids[i]
	}
	// Importing again changes nothing and prints the same ids.
	if again := rathOK(t, home, append([]string{"import"}, paths...)...); again != out {
		t.Errorf("second import printed %q, want %q", again, out)
	}

	var g export.Graph
	if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "graph", id["py_merge"])), &g); err != nil {
		t.Fatal(err)
	}
	var edges []string
	for _, e := range g.Edges {
		edges = append(edges, string(e.From)+">"+string(e.To))
	}
	slices.Sort(edges)
	want := []string{
		id["py_branch_a"] + ">" + id["py_merge"],
		id["py_branch_b"] + ">" + id["py_merge"],
		id["py_fork_point"] + ">" + id["py_branch_a"],
		id["py_loop"] + ">" + id["py_fork_point"],
	}
	slices.Sort(want)
	if !slices.Equal(edges, want) || len(g.Nodes) != 5 {
		t.Errorf("graph: %d nodes, edges %v; want 5 nodes, edges %v", len(g.Nodes), edges, want)
	}

	// An imported session is an ordinary one: it forks, and the fork
	// exports naming the original's UUID as its parent.
	fork := strings.TrimSpace(rathOK(t, home, "fork", id["py_merge"]))
	file := filepath.Join(t.TempDir(), "fork.jsonl")
	rathOK(t, home, "export", fork, "--format", "openrath", "-o", file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"parent_session_ids":["`+uuids["py_merge"]+`"]`)) {
		t.Errorf("fork's export does not name py_merge as its parent:\n%s", strings.SplitN(string(b), "\n", 2)[0])
	}
	// And the imported session exports with the original's header.
	file = filepath.Join(t.TempDir(), "merge.jsonl")
	rathOK(t, home, "export", id["py_merge"], "--format", "openrath", "-o", file)
	if b, err = os.ReadFile(file); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"id":"`+uuids["py_merge"]+`"`)) || !bytes.Contains(b, []byte(`"lineage_operator":"Session.merge"`)) {
		t.Errorf("export of py_merge lost its header:\n%s", strings.SplitN(string(b), "\n", 2)[0])
	}
}

// TestImportRefusesCycle: a file whose parents name itself is refused with
// one sentence naming the file, and nothing is imported.
func TestImportRefusesCycle(t *testing.T) {
	home := t.TempDir()
	b, err := os.ReadFile(filepath.Join(pyGolden, "py_create.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	self := bytes.Replace(b, []byte(`"parent_session_ids": []`), []byte(`"parent_session_ids": ["2f29775d-cd64-420a-8f6f-57f51a3e1551"]`), 1)
	path := filepath.Join(t.TempDir(), "self.jsonl")
	if err := os.WriteFile(path, self, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := rathIn(t, home, "", "import", path)
	if code == 0 || !strings.Contains(errs, path+":1: ") || !strings.Contains(errs, "lineage cycle") {
		t.Errorf("exit %d, stderr %q; want a failure naming the file, its line and the cycle", code, errs)
	}
	if out := rathOK(t, home, "--json", "ls", "--all"); strings.Contains(out, "import:openrath") {
		t.Errorf("a session was imported: %s", out)
	}
}
