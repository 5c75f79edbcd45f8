package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// TestRunFromImportedSession carries on, here, work begun in
// OpenRath-Python: its session file (session/openrath/testdata/py/py_loop.jsonl, written by
// the original) is imported, and a workflow runs on a fork of it.
func TestRunFromImportedSession(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home) // the runtime sets it; restore it after
	imported := session.ID(strings.TrimSpace(rathOK(t, home, "import", "../session/openrath/testdata/py/py_loop.jsonl")))
	_, importedChunks := showJSON(t, home, imported)

	var res struct {
		ID   session.ID `json:"id"`
		Run  session.ID `json:"run"`
		From session.ID `json:"from"`
		OK   bool       `json:"ok"`
	}
	if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "run", "adder", "--from", string(imported))), &res); err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.From != imported || res.Run == "" || res.Run == imported {
		t.Fatalf("run --from: %+v", res)
	}
	// The run's input is a fork of the imported session.
	in, inChunks := showJSON(t, home, res.Run)
	if in.Lineage.Kind != session.LineageFork || len(in.Lineage.Parents) != 1 || in.Lineage.Parents[0] != imported || in.Status != store.StatusClosed {
		t.Fatalf("the run's input: %+v", in)
	}
	if len(inChunks) != len(importedChunks) || inChunks[len(inChunks)-1].ID != importedChunks[len(importedChunks)-1].ID {
		t.Fatalf("the fork holds %d chunks, the imported session %d", len(inChunks), len(importedChunks))
	}
	// The output carries the Python conversation on.
	out, outChunks := showJSON(t, home, res.ID)
	if out.Labels[rath.WorkflowLabel] != "adder" || out.Status != store.StatusClosed {
		t.Fatalf("output: %+v", out)
	}
	for i, c := range importedChunks {
		if outChunks[i].ID != c.ID {
			t.Fatalf("output chunk %d differs from the imported one", i)
		}
	}
	if last := outChunks[len(outChunks)-1]; last.Assistant == nil || last.Assistant.Text != "2 + 3 = 5" {
		t.Fatalf("the output ends with %+v", last)
	}
	graph := rathOK(t, home, "graph", string(res.ID), "--format", "mermaid")
	if !strings.Contains(graph, string(imported)) {
		t.Fatalf("the output's graph does not reach the imported session:\n%s", graph)
	}

	// What cannot run: an imported session is no run to resume, a
	// workflow that takes no input is given none, a session that is not
	// stored is no place to start from.
	if code, _, errs := rathIn(t, home, "", "resume", string(imported)); code != 1 || !strings.Contains(errs, "is not a run started by rath run") {
		t.Fatalf("resume of an imported session: exit %d, %s", code, errs)
	}
	if code, _, errs := rathIn(t, home, "", "resume", string(res.Run)); code != 1 || !strings.Contains(errs, "has finished (closed)") {
		t.Fatalf("resume of a finished run: exit %d, %s", code, errs)
	}
	if code, _, errs := rathIn(t, home, "", "run", "adder", "--input", "x"); code != 2 || !strings.Contains(errs, "takes no input") {
		t.Fatalf("run with input: exit %d, %s", code, errs)
	}
	if code, _, errs := rathIn(t, home, "", "run", "adder", "--from", "ses_01M8B1TACYFRG9A8M9PZ96ZW58"); code != 1 || !strings.Contains(errs, "not found") {
		t.Fatalf("run from a missing session: exit %d, %s", code, errs)
	}
	if list := rathOK(t, home, "run"); !strings.Contains(list, "adder") || !strings.Contains(list, "WORKFLOW") {
		t.Fatalf("rath run without a name:\n%s", list)
	}
}

// showJSON is `rath show --json ID`, in process.
func showJSON(t *testing.T, home string, id session.ID) (store.Info, []session.Chunk) {
	t.Helper()
	var v struct {
		Info   store.Info      `json:"info"`
		Chunks []session.Chunk `json:"chunks"`
	}
	if err := json.Unmarshal([]byte(rathOK(t, home, "show", "--json", string(id))), &v); err != nil {
		t.Fatal(err)
	}
	return v.Info, v.Chunks
}
